// Direct all-reduce for ranks that share memory bandwidth (one host): rank k owns block k of n
// balanced blocks. Every rank sends chunk j of block k to its owner; the owner receives the n-1
// peers' chunk j one after another and folds each into its output chunk j while that chunk is still
// in cache, then sends the finished chunk to every peer. Memory traffic is (3n-1)S over all ranks
// against the ring's 5(n-1)S, because partial sums never leave the owner. Only the owner computes a
// block, in a fixed peer order, so every rank receives the same bytes.
#include <algorithm>
#include <optional>
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/plan_build.h"

namespace dc {

using namespace plan_build;

void build_direct_allreduce(const PlanRequest& request, Plan& plan) {
  const int n = request.nranks;
  const int r = request.rank;
  const uint64_t chunk = chunk_elems(request);
  const uint64_t chunks_per_block = chunk_count(ring_segment(request.count, n, 0).count, chunk);
  auto block = [&](int k) { return ring_segment(request.count, n, wrap(k, n)); };

  // Reduce-scatter sends: chunk j of block k to owner k, starting with the next rank so that the
  // owners' first receives are spread over the senders.
  std::vector<std::vector<uint32_t>> scattered(n);  // [k][j]: the send of block k's chunk j
  for (int i = 1; i < n; ++i) {
    const int k = wrap(r + i, n);
    for (const Range& c : split_chunks(block(k).count, chunk)) {
      scattered[k].push_back(plan.add(send(k, make_tag(0, chunks_per_block, c.offset / chunk),
                                           input(block(k).offset + c.offset), c.count)));
    }
  }

  // Accumulation into the own block, chunk by chunk, peer after peer. A transport that hands a
  // message over in pieces has each piece reduced while it is in cache; otherwise it lands in one of
  // the round-robin staging slots first (two chunks' worth, so transfers overlap reductions).
  const Range own = block(r);
  const std::vector<Range> own_chunks = split_chunks(own.count, chunk);
  const uint64_t slots = std::min<uint64_t>(own_chunks.size() * (n - 1), 2 * static_cast<uint64_t>(n - 1));
  const uint64_t slot_elems = std::min(chunk, own.count);
  plan.sizes.scratch = slots * slot_elems;
  std::vector<std::optional<uint32_t>> slot_user(slots);  // the last reduction that read the slot
  std::vector<uint32_t> finished(own_chunks.size());
  uint64_t next_slot = 0;
  for (size_t j = 0; j < own_chunks.size(); ++j) {
    const Range& c = own_chunks[j];
    const uint64_t at = own.offset + c.offset;
    std::optional<uint32_t> partial;
    for (int i = 1; i < n; ++i) {
      const uint64_t slot = next_slot++ % slots;
      std::vector<uint32_t> deps = after(slot_user[slot]);
      if (partial && partial != slot_user[slot]) deps.push_back(*partial);
      partial = plan.add(recv_reduce(wrap(r - i, n), make_tag(0, chunks_per_block, j), partial ? output(at) : input(at),
                                     output(at), scratch(slot * slot_elems), c.count),
                         deps);
      slot_user[slot] = partial;
    }
    finished[j] = plan.add(finalize(output(at), c.count), after(partial));
  }

  // All-gather: the finished chunks go to every peer; block k comes from its owner. In place, a
  // received chunk overwrites input the owner may still be reading, so it waits for that send.
  for (int i = 1; i < n; ++i) {
    const int to = wrap(r + i, n);
    for (size_t j = 0; j < own_chunks.size(); ++j) {
      const Range& c = own_chunks[j];
      plan.add(send(to, make_tag(1, chunks_per_block, j), output(own.offset + c.offset), c.count),
               {finished[j]});
    }
  }
  for (int i = 1; i < n; ++i) {
    const int from = wrap(r - i, n);
    const std::vector<Range> chunks = split_chunks(block(from).count, chunk);
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      plan.add(recv(from, make_tag(1, chunks_per_block, j), output(block(from).offset + c.offset), c.count),
               request.in_place ? std::vector<uint32_t>{scattered[from][j]} : std::vector<uint32_t>{});
    }
  }
}

}  // namespace dc
