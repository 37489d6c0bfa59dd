// Gather and scatter straight to and from the root, chunk by chunk; the root copies its own block.
// In place Input and Output share their start (see PlanRequest), so on a root other than rank 0
// the own block's copy and the transfers of block 0 touch one memory and are ordered.
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/plan_build.h"

namespace dc {

using namespace plan_build;

void build_direct_gather(const PlanRequest& request, Plan& plan) {
  const int n = request.nranks;
  const int root = request.root;
  const uint64_t count = request.count;
  const std::vector<Range> chunks = split_chunks(count, chunk_elems(request));
  const uint64_t per_peer = chunks.size();

  if (request.rank != root) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      plan.add(send(root, make_tag(0, per_peer, j), input(chunks[j].offset), chunks[j].count));
    }
    return;
  }
  const auto own = add_copy(plan, request, input(0),
                            output(static_cast<uint64_t>(root) * count), count);
  // In place, receiving block 0 overwrites Input: the own block must be copied out first.
  const std::vector<uint32_t> deps = request.in_place ? after(own) : std::vector<uint32_t>{};
  for (int peer = 0; peer < n; ++peer) {
    if (peer == root) continue;
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      plan.add(recv(peer, make_tag(0, per_peer, j),
                    output(static_cast<uint64_t>(peer) * count + c.offset), c.count),
               deps);
    }
  }
}

void build_direct_scatter(const PlanRequest& request, Plan& plan) {
  const int n = request.nranks;
  const int root = request.root;
  const uint64_t count = request.count;
  const std::vector<Range> chunks = split_chunks(count, chunk_elems(request));
  const uint64_t per_peer = chunks.size();

  if (request.rank != root) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      plan.add(recv(root, make_tag(0, per_peer, j), output(chunks[j].offset), chunks[j].count));
    }
    return;
  }
  std::vector<uint32_t> sends;
  for (int peer = 0; peer < n; ++peer) {
    if (peer == root) continue;
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      sends.push_back(plan.add(send(peer, make_tag(0, per_peer, j),
                                    input(static_cast<uint64_t>(peer) * count + c.offset),
                                    c.count)));
    }
  }
  // In place, Output is Input's block 0: it may be overwritten only after block 0 was sent.
  add_copy(plan, request, input(static_cast<uint64_t>(root) * count), output(0), count,
           request.in_place ? sends : std::vector<uint32_t>{});
}

}  // namespace dc
