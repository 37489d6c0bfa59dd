// Gather and scatter straight to and from the root, chunk by chunk; the root copies its own block.
// In place Input and Output share their start (see PlanRequest), so on a root other than rank 0
// the own block's copy and the transfers of block 0 touch one memory and are ordered.
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

void build_direct_gather(BuildSpace& sp) {
  const int n = sp.n();
  const int root = sp.root;
  const uint64_t count = sp.count;
  const std::vector<Range> chunks = split_chunks(count, sp.chunk_elems());
  const uint64_t per_peer = chunks.size();

  if (sp.self != root) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      sp.add(send(sp.peer(root), sp.tag(0, per_peer, j), sp.input(chunks[j].offset), chunks[j].count));
    }
    return;
  }
  const auto own = sp.add_copy(sp.input(0), sp.output(static_cast<uint64_t>(root) * count), count);
  // In place, receiving block 0 overwrites Input: the own block must be copied out first.
  const std::vector<uint32_t> deps = sp.request->in_place ? after(own) : std::vector<uint32_t>{};
  for (int peer = 0; peer < n; ++peer) {
    if (peer == root) continue;
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      sp.add(recv(sp.peer(peer), sp.tag(0, per_peer, j), sp.output(static_cast<uint64_t>(peer) * count + c.offset),
                  c.count),
             deps);
    }
  }
}

void build_direct_scatter(BuildSpace& sp) {
  const int n = sp.n();
  const int root = sp.root;
  const uint64_t count = sp.count;
  const std::vector<Range> chunks = split_chunks(count, sp.chunk_elems());
  const uint64_t per_peer = chunks.size();

  if (sp.self != root) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      sp.add(recv(sp.peer(root), sp.tag(0, per_peer, j), sp.output(chunks[j].offset), chunks[j].count));
    }
    return;
  }
  std::vector<uint32_t> sends;
  for (int peer = 0; peer < n; ++peer) {
    if (peer == root) continue;
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      sends.push_back(sp.add(send(sp.peer(peer), sp.tag(0, per_peer, j),
                                  sp.input(static_cast<uint64_t>(peer) * count + c.offset), c.count)));
    }
  }
  // In place, Output is Input's block 0: it may be overwritten only after block 0 was sent.
  sp.add_copy(sp.input(static_cast<uint64_t>(root) * count), sp.output(0), count,
              sp.request->in_place ? sends : std::vector<uint32_t>{});
}

// The root takes (or hands out) n-1 blocks one after another.
Traffic direct_gather_traffic(const PlanRequest& request, const std::vector<int>& members) {
  return star_traffic(request, members, true, static_cast<int>(members.size()) - 1);
}

Traffic direct_scatter_traffic(const PlanRequest& request, const std::vector<int>& members) {
  return star_traffic(request, members, false, static_cast<int>(members.size()) - 1);
}

}  // namespace dc
