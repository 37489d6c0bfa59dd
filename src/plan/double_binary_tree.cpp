// NCCL's double binary tree all-reduce. Tree 0 is a binary tree over member positions 0..n-1 whose
// inner nodes are the even positions; tree 1 is its mirror (n even) or its shift by one (n odd),
// whose inner nodes are odd, so each member forwards data in at most one tree. Half of the buffer
// goes through each tree: reduced up to the tree's root (children folded in a fixed order), which
// finalizes it, then broadcast down. Chunks pipeline through the trees, so the latency is about
// 2·log2(n) hops and each member sends and receives about the buffer's size twice — the ring's
// bandwidth with the tree's latency. Members run in topology order, so tree neighbours share a
// host or a fast group where they can.
#include <algorithm>
#include <optional>
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/tree_shape.h"

namespace dc {

using namespace plan_build;

namespace {

// NCCL's btree (ncclGetBtree): the parent of position r > 0 is found from r's lowest set bit;
// position 0 is the root, with one child.
int btree_parent(int r, int n) {
  if (r == 0) return -1;
  int bit = 1;
  while ((bit & r) == 0) bit <<= 1;
  int up = (r ^ bit) | (bit << 1);
  if (up >= n) up = r ^ bit;
  return up;
}

int tree_parent(int tree, int r, int n) {
  if (tree == 0) return btree_parent(r, n);
  if (n % 2 == 1) {  // shift by one
    const int up = btree_parent((r - 1 + n) % n, n);
    return up < 0 ? -1 : (up + 1) % n;
  }
  const int up = btree_parent(n - 1 - r, n);  // mirror
  return up < 0 ? -1 : n - 1 - up;
}

Tree make_tree(int tree, int n) {
  std::vector<int> parent(n);
  for (int r = 0; r < n; ++r) parent[r] = tree_parent(tree, r, n);
  return tree_from_parents(parent);
}

// One half through one tree, chunk by chunk: fold the children in, send up (the root finalizes),
// receive the result from the parent, send it down.
void build_half(BuildSpace& sp, const Tree& tree, int index, Range half, uint64_t per_phase) {
  const int r = sp.self;
  const std::vector<Range> chunks = split_chunks(half.count, sp.chunk_elems());
  const uint64_t up_phase = 2 * static_cast<uint64_t>(index), down_phase = up_phase + 1;
  for (size_t j = 0; j < chunks.size(); ++j) {
    const uint64_t at = half.offset + chunks[j].offset, count = chunks[j].count;
    std::optional<uint32_t> partial;
    for (int child : tree.children[r]) {
      const BufRef operand = partial ? sp.output(at) : sp.input(at);
      partial = sp.add(
          recv_reduce(sp.peer(child), sp.tag(up_phase, per_phase, j), operand, sp.output(at), sp.scratch(at), count),
          after(partial));
    }
    uint32_t have;
    if (r == tree.root) {
      // The root has a child whenever there are two members or more.
      have = sp.add_finalize(sp.output(at), count, after(partial)).value_or(*partial);
    } else {
      const BufRef src = partial ? sp.output(at) : sp.input(at);
      const uint32_t up =
          sp.add(send(sp.peer(tree.parent[r]), sp.tag(up_phase, per_phase, j), src, count), after(partial));
      // The result overwrites what was sent up.
      have = sp.add(recv(sp.peer(tree.parent[r]), sp.tag(down_phase, per_phase, j), sp.output(at), count), {up});
    }
    for (int child : tree.children[r])
      sp.add(send(sp.peer(child), sp.tag(down_phase, per_phase, j), sp.output(at), count), {have});
  }
}

}  // namespace

void build_dbtree_allreduce(BuildSpace& space) {
  BuildSpace sp = topology_ordered(space);
  const int n = sp.n();
  const Range halves[2] = {ring_segment(sp.count, 2, 0), ring_segment(sp.count, 2, 1)};
  const uint64_t per_phase = chunk_count(halves[0].count, sp.chunk_elems());
  // Staging for the children's partial results, at the place of the chunk they belong to.
  bool inner = false;
  std::vector<Tree> trees = {make_tree(0, n), make_tree(1, n)};
  for (const Tree& t : trees) inner = inner || !t.children[sp.self].empty();
  if (inner) sp.reserve_scratch(sp.count);
  for (int t = 0; t < 2; ++t)
    if (halves[t].count > 0) build_half(sp, trees[t], t, halves[t], per_phase);
}

Traffic dbtree_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members) {
  const ClusterView& view = *request.cluster;
  Traffic t(view);
  const std::vector<int> ordered = view.topology_order(members);
  const int n = static_cast<int>(ordered.size());
  const uint64_t chunk = chunk_elems(request);
  double latency = 0, fill = 0;
  for (int index = 0; index < 2; ++index) {
    const Range half = ring_segment(request.count, 2, index);
    if (half.count == 0) continue;
    const Tree tree = make_tree(index, n);
    const double bytes = static_cast<double>(half.count * request.elem_size);
    for (int r = 0; r < n; ++r) {
      if (r == tree.root) continue;
      t.transfer(ordered[r], ordered[tree.parent[r]], bytes, true);
      t.transfer(ordered[tree.parent[r]], ordered[r], bytes);
    }
    const double chunks = static_cast<double>(chunk_count(half.count, chunk));
    const double chunk_bytes = static_cast<double>(std::min(chunk, half.count) * request.elem_size);
    latency = std::max(latency, tree_alpha_seconds(view, ordered, tree, chunks));
    fill = std::max(fill, tree_fill_seconds(view, ordered, tree, chunk_bytes));
  }
  t.hops(1, latency);
  t.pipeline_fill(fill);
  return t;
}

}  // namespace dc
