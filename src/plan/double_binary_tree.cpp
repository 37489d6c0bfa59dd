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

struct Tree {
  std::vector<int> parent;                 // per position, -1 at the root
  std::vector<std::vector<int>> children;  // per position, ascending
  int root = 0;
};

Tree make_tree(int tree, int n) {
  Tree t;
  t.parent.resize(n);
  t.children.resize(n);
  for (int r = 0; r < n; ++r) {
    t.parent[r] = tree_parent(tree, r, n);
    if (t.parent[r] < 0) t.root = r;
    else t.children[t.parent[r]].push_back(r);
  }
  return t;
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
      partial = sp.add(recv_reduce(sp.peer(child), sp.tag(up_phase, per_phase, j), operand, sp.output(at),
                                   sp.scratch(at), count),
                       after(partial));
    }
    uint32_t have;
    if (r == tree.root) {
      // The root has a child whenever there are two members or more.
      have = sp.add_finalize(sp.output(at), count, after(partial)).value_or(*partial);
    } else {
      const BufRef src = partial ? sp.output(at) : sp.input(at);
      const uint32_t up = sp.add(send(sp.peer(tree.parent[r]), sp.tag(up_phase, per_phase, j), src, count),
                                 after(partial));
      // The result overwrites what was sent up.
      have = sp.add(recv(sp.peer(tree.parent[r]), sp.tag(down_phase, per_phase, j), sp.output(at), count), {up});
    }
    for (int child : tree.children[r])
      sp.add(send(sp.peer(child), sp.tag(down_phase, per_phase, j), sp.output(at), count), {have});
  }
}

// The longest chain of messages through one tree, one chunk: a member folds its children one
// after another, then the result goes down (as materialized_traffic times a plan).
double tree_latency(const ClusterView& view, const std::vector<int>& members, const Tree& tree) {
  const int n = static_cast<int>(members.size());
  auto alpha = [&](int a, int b) { return view.tier_between(members[a], members[b]).latency_s; };
  // Positions ordered so that children come before their parent.
  std::vector<int> order, stack{tree.root};
  while (!stack.empty()) {
    const int r = stack.back();
    stack.pop_back();
    order.push_back(r);
    for (int c : tree.children[r]) stack.push_back(c);
  }
  // up: when a member's partial result is ready (its children folded one after another);
  // down: when it has the result (its parent's, one message later).
  std::vector<double> up(n, 0.0), down(n, 0.0);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    double at = 0;
    for (int c : tree.children[*it]) at = std::max(at, up[c]) + alpha(c, *it);
    up[*it] = at;
  }
  double longest = up[tree.root];
  for (int r : order) {
    down[r] = r == tree.root ? up[r] : down[tree.parent[r]] + alpha(tree.parent[r], r);
    longest = std::max(longest, down[r]);
  }
  return longest;
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
  double latency = 0;
  for (int index = 0; index < 2; ++index) {
    const Range half = ring_segment(request.count, 2, index);
    if (half.count == 0) continue;
    const Tree tree = make_tree(index, n);
    const double bytes = static_cast<double>(half.count * request.elem_size);
    double slowest = 0;
    for (int r = 0; r < n; ++r) {
      if (r == tree.root) continue;
      t.transfer(ordered[r], ordered[tree.parent[r]], bytes, true);
      t.transfer(ordered[tree.parent[r]], ordered[r], bytes);
      slowest = std::max(slowest, view.tier_between(ordered[r], ordered[tree.parent[r]]).latency_s);
    }
    // Later chunks follow the first one step behind on the slowest edge.
    const double chunks = static_cast<double>(chunk_count(half.count, chunk));
    latency = std::max(latency, tree_latency(view, ordered, tree) + (chunks - 1) * slowest);
  }
  t.hops(1, latency);
  return t;
}

}  // namespace dc
