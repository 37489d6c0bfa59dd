// Ring all-reduce: a reduce-scatter over n segments followed by an all-gather, each segment split
// into chunks. Chunk j of ring step s depends only on chunk j of step s-1, so chunks flow around
// the ring concurrently. The segment owner finalizes its fully reduced segment before passing it
// on, so every rank receives the same bytes.
#include <algorithm>
#include <optional>
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/plan_build.h"

namespace dc {

using namespace plan_build;

namespace {
constexpr uint64_t kStagingSlots = 4;
}  // namespace

void build_ring_allreduce(const PlanRequest& request, Plan& plan) {
  const int n = request.nranks;
  const int r = request.rank;
  const int next = wrap(r + 1, n);
  const int prev = wrap(r - 1, n);
  const uint64_t chunk = chunk_elems(request);
  const uint64_t longest = ring_segment(request.count, n, 0).count;
  const uint64_t chunks_per_step = chunk_count(longest, chunk);
  // Staging for received chunks: a few chunk-sized slots, reused round-robin (chunk j in slot
  // j % slots), so that what a receive writes is still in cache when its reduction reads it. A
  // whole segment of staging would send every received byte through memory twice more.
  const uint64_t slots = std::min<uint64_t>(chunks_per_step, kStagingSlots);
  plan.sizes.scratch = std::min(longest, slots * chunk);

  // Per chunk position j: the step that produced the data sent next; per staging slot: the last
  // step that used it.
  std::vector<std::optional<uint32_t>> produced(chunks_per_step);
  std::vector<std::optional<uint32_t>> staged(slots);
  // Reduce-scatter sends per step; the all-gather overwrites those places only after them.
  std::vector<std::vector<uint32_t>> scatter_sends(n - 1);

  // Reduce-scatter: step s sends segment r-s and accumulates segment r-s-1 into Output.
  for (int s = 0; s + 1 < n; ++s) {
    const Range out_seg = ring_segment(request.count, n, wrap(r - s, n));
    for (const Range& c : split_chunks(out_seg.count, chunk)) {
      const uint64_t j = c.offset / chunk;
      const uint64_t at = out_seg.offset + c.offset;
      const BufRef src = s == 0 ? input(at) : output(at);
      scatter_sends[s].push_back(
          plan.add(send(next, make_tag(s, chunks_per_step, j), src, c.count), after(produced[j])));
    }
    const Range in_seg = ring_segment(request.count, n, wrap(r - s - 1, n));
    for (const Range& c : split_chunks(in_seg.count, chunk)) {
      const uint64_t j = c.offset / chunk;
      const uint64_t at = in_seg.offset + c.offset;
      const uint64_t slot = j % slots;
      std::vector<uint32_t> deps = after(staged[slot]);
      if (produced[j] && (!staged[slot] || *produced[j] != *staged[slot])) deps.push_back(*produced[j]);
      const uint32_t step = plan.add(recv_reduce(prev, make_tag(s, chunks_per_step, j), input(at), output(at),
                                                 scratch(slot * chunk), c.count),
                                     deps);
      staged[slot] = produced[j] = step;
    }
  }

  // This rank now holds the fully reduced segment r+1.
  const Range owned = ring_segment(request.count, n, wrap(r + 1, n));
  for (const Range& c : split_chunks(owned.count, chunk)) {
    const uint64_t j = c.offset / chunk;
    produced[j] = plan.add(finalize(output(owned.offset + c.offset), c.count), after(produced[j]));
  }

  // All-gather: step s forwards segment r+1-s and receives segment r-s.
  for (int s = 0; s + 1 < n; ++s) {
    const uint64_t phase = static_cast<uint64_t>(n - 1 + s);
    const Range out_seg = ring_segment(request.count, n, wrap(r + 1 - s, n));
    for (const Range& c : split_chunks(out_seg.count, chunk)) {
      const uint64_t j = c.offset / chunk;
      plan.add(send(next, make_tag(phase, chunks_per_step, j), output(out_seg.offset + c.offset),
                    c.count),
               after(produced[j]));
    }
    const Range in_seg = ring_segment(request.count, n, wrap(r - s, n));
    for (const Range& c : split_chunks(in_seg.count, chunk)) {
      const uint64_t j = c.offset / chunk;
      // Segment r-s was sent in reduce-scatter step s (from Output, or from Input when in place).
      produced[j] = plan.add(recv(prev, make_tag(phase, chunks_per_step, j),
                                  output(in_seg.offset + c.offset), c.count),
                             {scatter_sends[s][j]});
    }
  }
}

}  // namespace dc
