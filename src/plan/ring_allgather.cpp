// Ring all-gather: step s forwards block r-s to the next member and receives block r-s-1 from the
// previous one, chunk by chunk; chunk j of step s waits only for chunk j of step s-1.
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

void build_ring_allgather(BuildSpace& sp) {
  const int n = sp.n();
  const int r = sp.self;
  const uint64_t count = sp.count;
  const std::vector<Range> chunks = split_chunks(count, sp.chunk_elems());
  const uint64_t per_step = chunks.size();
  auto block = [&](int k) { return static_cast<uint64_t>(wrap(k, n)) * count; };

  // In place the own block already is Input.
  sp.add_copy(sp.input(0), sp.output(block(r)), count);

  std::vector<uint32_t> received(chunks.size());
  for (int s = 0; s + 1 < n; ++s) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      if (s == 0) {
        sp.add(send(sp.peer(r + 1), sp.tag(s, per_step, j), sp.input(c.offset), c.count));
      } else {
        sp.add(send(sp.peer(r + 1), sp.tag(s, per_step, j), sp.output(block(r - s) + c.offset), c.count),
               {received[j]});
      }
    }
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      received[j] = sp.add(recv(sp.peer(r - 1), sp.tag(s, per_step, j), sp.output(block(r - s - 1) + c.offset),
                                c.count));
    }
  }
}

Traffic ring_allgather_traffic(const PlanRequest& request, const std::vector<int>& members) {
  Traffic t(*request.cluster);
  const int n = static_cast<int>(members.size());
  const double block = static_cast<double>(request.count * request.elem_size);
  const uint64_t chunks = chunk_count(request.count, chunk_elems(request));
  double latency = 0;
  for (int i = 0; i < n; ++i) {
    const int from = members[i], to = members[(i + 1) % n];
    latency = std::max(latency, request.cluster->tier_between(from, to).latency_s);
    for (int s = 0; s + 1 < n; ++s) t.transfer(from, to, block);
  }
  // Forwarding: a block's last chunk reaches the farthest member n-1 hops after the first left.
  t.hops(n - 1 + static_cast<int>(chunks) - 1, latency);
  return t;
}

}  // namespace dc
