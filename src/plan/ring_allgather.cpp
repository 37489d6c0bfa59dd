// Ring all-gather: step s forwards block r-s to the next member and receives block r-s-1 from the
// previous one, chunk by chunk; chunk j of step s waits only for chunk j of step s-1.
#include <algorithm>
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

void build_ring_allgather(BuildSpace& space) {
  // The ring runs in topology order; position k carries the block of the member it holds.
  BuildSpace sp = topology_ordered(space);
  const std::vector<int> block_of = ring_blocks(space, sp);
  const int n = sp.n();
  const int r = sp.self;
  const uint64_t count = sp.count;
  const std::vector<Range> chunks = split_chunks(count, sp.chunk_elems());
  const uint64_t per_step = chunks.size();
  auto block = [&](int k) { return static_cast<uint64_t>(block_of[wrap(k, n)]) * count; };

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
      received[j] =
          sp.add(recv(sp.peer(r - 1), sp.tag(s, per_step, j), sp.output(block(r - s - 1) + c.offset), c.count));
    }
  }
}

Traffic ring_allgather_traffic(const PlanRequest& request, const std::vector<int>& members) {
  Traffic t(*request.cluster);
  const std::vector<int> ring = request.cluster->topology_order(members);
  const int n = static_cast<int>(ring.size());
  const double block = static_cast<double>(request.count * request.elem_size);
  const uint64_t chunks = chunk_count(request.count, chunk_elems(request));
  for (int i = 0; i < n; ++i) t.transfer(ring[i], ring[(i + 1) % n], block * (n - 1), false, n - 1);
  // Forwarding: a block travels n-1 edges with nothing to wait for but itself, and its last chunk
  // follows the first chunks-1 steps of the slowest edge behind.
  std::vector<double> edge(2 * static_cast<size_t>(n));
  for (int i = 0; i < 2 * n; ++i) edge[i] = request.cluster->tier_between(ring[i % n], ring[(i + 1) % n]).latency_s;
  double window = 0;
  for (int i = 0; i < n - 1; ++i) window += edge[i];
  double longest = window;
  for (int start = 1; start < n; ++start) {
    window += edge[start + n - 2] - edge[start - 1];
    longest = std::max(longest, window);
  }
  t.hops(1, longest);
  t.hops(static_cast<int>(chunks) - 1, ring_step_latency(*request.cluster, ring));
  return t;
}

}  // namespace dc
