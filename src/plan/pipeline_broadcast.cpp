// Pipelined chain broadcast: root -> root+1 -> ... -> root+n-1 (member indices), chunk by chunk, so
// a member forwards chunk k while it receives chunk k+1.
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

void build_pipeline_broadcast(BuildSpace& sp) {
  const int n = sp.n();
  const int r = sp.self;
  const int position = wrap(r - sp.root, n);  // 0 = root, n-1 = end of the chain
  const std::vector<Range> chunks = split_chunks(sp.count, sp.chunk_elems());
  const uint64_t per_phase = chunks.size();

  if (position == 0) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      sp.add(send(sp.peer(r + 1), sp.tag(0, per_phase, j), sp.input(chunks[j].offset), chunks[j].count));
    }
    sp.add_copy(sp.input(0), sp.output(0), sp.count);
    return;
  }
  for (size_t j = 0; j < chunks.size(); ++j) {
    const Range& c = chunks[j];
    const uint32_t got = sp.add(recv(sp.peer(r - 1), sp.tag(0, per_phase, j), sp.output(c.offset), c.count));
    if (position + 1 < n) {
      sp.add(send(sp.peer(r + 1), sp.tag(0, per_phase, j), sp.output(c.offset), c.count), {got});
    }
  }
}

// The chain's traffic; pipeline_reduce prices the same chain in the other direction.
Traffic chain_traffic(const PlanRequest& request, const std::vector<int>& members, bool reduce) {
  Traffic t(*request.cluster);
  const int n = static_cast<int>(members.size());
  const double bytes = static_cast<double>(request.count * request.elem_size);
  double latency = 0;
  for (int i = 0; i + 1 < n; ++i) {
    const int near = members[wrap(request.root + i, n)], far = members[wrap(request.root + i + 1, n)];
    latency = std::max(latency, request.cluster->tier_between(near, far).latency_s);
    if (reduce) t.transfer(far, near, bytes, true);
    else t.transfer(near, far, bytes);
  }
  const uint64_t chunks = chunk_count(request.count, chunk_elems(request));
  t.hops(n - 1 + static_cast<int>(chunks) - 1, latency);
  return t;
}

Traffic pipeline_broadcast_traffic(const PlanRequest& request, const std::vector<int>& members) {
  return chain_traffic(request, members, false);
}

}  // namespace dc
