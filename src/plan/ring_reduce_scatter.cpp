// Ring reduce-scatter: step s sends the partial result of block r-s-1 to the next member and
// accumulates block r-s-2 from the previous one; after n-1 steps the rank holds block r, which it
// finalizes in Output. Partial results live in Scratch (Input is never written out of place).
#include <algorithm>
#include <optional>
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

void build_ring_reduce_scatter(BuildSpace& space) {
  // The ring runs in topology order; position k reduces the block of the member it holds.
  BuildSpace sp = topology_ordered(space);
  const std::vector<int> block_of = ring_blocks(space, sp);
  const int n = sp.n();
  const int r = sp.self;
  const uint64_t count = sp.count;
  const std::vector<Range> chunks = split_chunks(count, sp.chunk_elems());
  const uint64_t per_step = chunks.size();
  auto block = [&](int k) { return static_cast<uint64_t>(block_of[wrap(k, n)]) * count; };
  // Scratch: [0, count) stages received chunks; two slots after it hold partial results,
  // alternating by step. One slot is not enough: the receive of step s would then wait for the
  // send of step s, which waits for the peer's receive of step s, all around the ring.
  auto partial_at = [&](int step) { return count * (1 + static_cast<uint64_t>(step % 2)); };
  sp.reserve_scratch(count * (1 + static_cast<uint64_t>(std::min(n - 2, 2))));

  std::vector<std::optional<uint32_t>> produced(chunks.size());  // latest RecvReduce of chunk j
  std::vector<std::optional<uint32_t>> sent(chunks.size());      // latest send of chunk j
  for (int s = 0; s + 1 < n; ++s) {
    // The partial-result slot written in this step was last read by the send of step s-1.
    std::vector<std::optional<uint32_t>> slot_read(chunks.size());
    if (s >= 2) slot_read = sent;
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      const uint32_t tag = sp.tag(s, per_step, j);
      const BufRef src = s == 0 ? sp.input(block(r - 1) + c.offset) : sp.scratch(partial_at(s - 1) + c.offset);
      sent[j] = sp.add(send(sp.peer(r + 1), tag, src, c.count), after(produced[j]));
    }
    const bool last = s + 2 == n;
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      // The staging slot was used by the previous step's receive (produced[j]).
      std::vector<uint32_t> deps = after(produced[j]);
      if (!last && slot_read[j]) deps.push_back(*slot_read[j]);
      const BufRef dst = last ? sp.output(c.offset) : sp.scratch(partial_at(s) + c.offset);
      produced[j] = sp.add(recv_reduce(sp.peer(r - 1), sp.tag(s, per_step, j), sp.input(block(r - s - 2) + c.offset),
                                       dst, sp.scratch(c.offset), c.count),
                           deps);
    }
  }
  for (size_t j = 0; j < chunks.size(); ++j) {
    sp.add_finalize(sp.output(chunks[j].offset), chunks[j].count, after(produced[j]));
  }
}

Traffic ring_reduce_scatter_traffic(const PlanRequest& request, const std::vector<int>& members) {
  Traffic t(*request.cluster);
  const std::vector<int> ring = request.cluster->topology_order(members);
  const int n = static_cast<int>(ring.size());
  const double block = static_cast<double>(request.count * request.elem_size);
  for (int i = 0; i < n; ++i) t.transfer(ring[i], ring[(i + 1) % n], block * (n - 1), true, n - 1);
  t.hops(n - 1, ring_step_latency(*request.cluster, ring));
  return t;
}

}  // namespace dc
