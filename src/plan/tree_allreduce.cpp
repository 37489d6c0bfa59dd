// Tree all-reduce for small messages: binomial-tree reduce to member 0, which finalizes, then a
// binomial broadcast of the result. Only member 0 computes the final value, so all ranks receive
// the same bytes. Each chunk runs through the tree independently, so chunks pipeline.
#include <optional>
#include <vector>

#include "src/plan/generators.h"

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

int ceil_log2(int n) {
  int depth = 0;
  while ((1 << depth) < n) ++depth;
  return depth;
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
  Traffic t(*request.cluster);
  const int n = static_cast<int>(members.size());
  const double bytes = static_cast<double>(request.count * request.elem_size);
  const ClusterView& view = *request.cluster;
  double level_seconds = 0;  // the slowest edge moving the whole message
  for (int r = 1; r < n; ++r) {
    const int parent = members[tree_links(r, n).parent], child = members[r];
    const LinkTier& tier = view.tier_between(parent, child);
    const double rate = view.same_host(parent, child) && view.shared_memory() ? view.rank_memory_bandwidth() / 2
                                                                              : tier.bandwidth_Bps;
    level_seconds = std::max(level_seconds, tier.latency_s + bytes / rate);
    t.transfer(child, parent, bytes, true);
    t.transfer(parent, child, bytes, false);
  }
  // Every level carries the whole message, up and down, one level after another (as the α-β
  // model prices a tree: it gains on latency, not on bandwidth).
  t.hops(2 * ceil_log2(n), level_seconds);
  return t;
}

}  // namespace dc
