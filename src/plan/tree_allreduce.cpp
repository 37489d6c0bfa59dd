// Tree all-reduce for small messages: binomial-tree reduce to member 0, which finalizes, then a
// binomial broadcast of the result. Only member 0 computes the final value, so all ranks receive
// the same bytes. Each chunk runs through the tree independently, so chunks pipeline.
#include <algorithm>
#include <optional>
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/tree_shape.h"

namespace dc {

using namespace plan_build;

namespace {

// In the binomial tree rooted at 0, member r's parent is r without its lowest set bit; its
// children are r + m for the powers of two m below that bit (all of them for member 0).
struct TreeLinks {
  int parent = -1;
  std::vector<int> children;
};

TreeLinks tree_links(int r, int n) {
  int lowest_bit = 1;
  while (r != 0 && (r & lowest_bit) == 0) lowest_bit <<= 1;
  if (r == 0) {
    while (lowest_bit < n) lowest_bit <<= 1;
  }
  TreeLinks links;
  links.parent = r - lowest_bit;
  for (int m = 1; m < lowest_bit && r + m < n; m <<= 1) links.children.push_back(r + m);
  return links;
}

}  // namespace

void build_tree_allreduce(BuildSpace& sp) {
  const int r = sp.self;
  const TreeLinks links = tree_links(r, sp.n());
  const std::vector<Range> chunks = split_chunks(sp.count, sp.chunk_elems());
  const uint64_t per_phase = chunks.size();
  // Staging for children's partial results, one slot per chunk, reused child after child.
  if (!links.children.empty()) sp.reserve_scratch(sp.count);

  // Reduce phase, children in increasing distance: the same order on every run.
  std::vector<uint32_t> up(chunks.size());  // send to the parent, or member 0's finalize
  for (size_t j = 0; j < chunks.size(); ++j) {
    const Range& c = chunks[j];
    std::optional<uint32_t> partial;
    for (int child : links.children) {
      const BufRef operand = partial ? sp.output(c.offset) : sp.input(c.offset);
      partial = sp.add(recv_reduce(sp.peer(child), sp.tag(0, per_phase, j), operand, sp.output(c.offset),
                                   sp.scratch(c.offset), c.count),
                       after(partial));
    }
    if (r == 0) {
      // Member 0 has children whenever there are two members or more.
      up[j] = sp.add_finalize(sp.output(c.offset), c.count, after(partial)).value_or(*partial);
    } else {
      const BufRef src = partial ? sp.output(c.offset) : sp.input(c.offset);
      up[j] = sp.add(send(sp.peer(links.parent), sp.tag(0, per_phase, j), src, c.count), after(partial));
    }
  }

  // Broadcast phase, largest subtree first. The receive overwrites what was sent up.
  for (size_t j = 0; j < chunks.size(); ++j) {
    const Range& c = chunks[j];
    uint32_t have = up[j];
    if (r != 0) {
      have = sp.add(recv(sp.peer(links.parent), sp.tag(1, per_phase, j), sp.output(c.offset), c.count), {up[j]});
    }
    for (auto child = links.children.rbegin(); child != links.children.rend(); ++child) {
      sp.add(send(sp.peer(*child), sp.tag(1, per_phase, j), sp.output(c.offset), c.count), {have});
    }
  }
}

Traffic tree_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members) {
  const ClusterView& view = *request.cluster;
  Traffic t(view);
  const int n = static_cast<int>(members.size());
  const double bytes = static_cast<double>(request.count * request.elem_size);
  const uint64_t chunk = chunk_elems(request);
  const double chunks = static_cast<double>(chunk_count(request.count, chunk));
  const double chunk_bytes = static_cast<double>(std::min(chunk, request.count) * request.elem_size);
  std::vector<int> parent(n);
  for (int r = 0; r < n; ++r) parent[r] = tree_links(r, n).parent;
  // The whole message goes up and down every edge, a message per chunk; chunks pipeline
  // (tree_shape.h).
  for (int r = 1; r < n; ++r) {
    t.transfer(members[r], members[parent[r]], bytes, true, chunks);
    t.transfer(members[parent[r]], members[r], bytes, false, chunks);
  }
  t.memory(members[0], 2 * bytes);  // member 0's finalize pass reads and writes the message
  const Tree tree = tree_from_parents(parent);
  t.hops(1, tree_alpha_seconds(view, members, tree, chunks));
  t.pipeline_fill(tree_fill_seconds(view, members, tree, chunk_bytes));
  return t;
}

}  // namespace dc
