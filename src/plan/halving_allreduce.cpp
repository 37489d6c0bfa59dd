// Recursive halving and doubling all-reduce (Rabenseifner's): a reduce-scatter in log2(n) rounds,
// in which member v swaps half of the range it still reduces with member v ^ m (m = n/2, n/4, ...,
// 1), keeps the half on its side of bit m and combines the partner's copy of that half into its
// own; then an all-gather in the same rounds backwards, each doubling the range a member holds.
// Like the ring, every member sends and receives (n-1)/n of the vector in each half, but in
// 2 log2(n) message hops instead of 2 (n-1). Each element is reduced by one member, which
// finalizes it before the all-gather, so every member ends with the same bytes. The members must
// be a power of two (halving_allreduce_applicable says where else it applies, and why).
#include <algorithm>
#include <optional>
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

namespace {

// A step and the elements of the output region it wrote (or, for a send, read).
struct Touched {
  Range range;
  uint32_t step;
};

bool overlap(const Range& a, const Range& b) { return a.offset < b.offset + b.count && b.offset < a.offset + a.count; }

std::vector<uint32_t> steps_over(const std::vector<Touched>& touched, const Range& r) {
  std::vector<uint32_t> steps;
  for (const Touched& t : touched)
    if (overlap(t.range, r)) steps.push_back(t.step);
  return steps;
}

int halving_rounds(int n) {
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  return rounds;
}

// The halves of a range split in round i: the lower one takes the odd element.
Range lower_half(const Range& r) { return {r.offset, r.count - r.count / 2}; }
Range upper_half(const Range& r) { return {r.offset + r.count - r.count / 2, r.count / 2}; }

// Chunks of `r`, in output coordinates.
std::vector<Range> chunks_of(const Range& r, uint64_t chunk) {
  std::vector<Range> out = split_chunks(r.count, chunk);
  for (Range& c : out) c.offset += r.offset;
  return out;
}

// The chunks of `r`, the range member `holder` keeps in round i, in the order it needs them: those
// it sends on in round i + 1 first, so that its next round starts while the rest still arrive. Its
// partner sends them in this order, and it posts their receives in it (the staging slots follow
// the posting order).
std::vector<Range> forwarding_order(const Range& r, uint64_t chunk, int holder, int n, int i, int rounds) {
  std::vector<Range> chunks = chunks_of(r, chunk);
  if (i + 1 >= rounds) return chunks;
  const bool sends_upper = holder < (holder ^ (n >> (i + 2)));
  const Range next = sends_upper ? upper_half(r) : lower_half(r);
  std::stable_partition(chunks.begin(), chunks.end(), [&](const Range& c) { return overlap(c, next); });
  return chunks;
}

}  // namespace

bool halving_allreduce_applicable(const PlanRequest& request, const std::vector<int>& members) {
  const size_t n = members.size();
  if (n < 2 || (n & (n - 1)) != 0) return false;
  if (members_span_hosts(request, members) || members_share_memory(request, members)) return false;
  const uint64_t bytes = request.count * request.elem_size;
  if (bytes < n * kHalvingMinSegmentBytes) return false;
  const bool in_place = request.cluster && request.cluster->receives_in_place();
  return bytes <= (in_place ? kHalvingMaxBytesInPlace : n * kHalvingMaxSegmentBytes);
}

void build_halving_allreduce(BuildSpace& sp) {
  const int n = sp.n(), self = sp.self, rounds = halving_rounds(n);
  const uint64_t chunk = sp.chunk_elems();
  const uint64_t per_phase = chunk_count(sp.count - sp.count / 2, chunk);  // the largest half's chunks
  // Received chunks land in a few chunk-sized slots, reused round-robin across the rounds, and are
  // combined as they arrive, while still in cache (as the ring's are).
  const uint64_t slots = std::min<uint64_t>(per_phase, kStagingSlots);
  sp.reserve_scratch(std::min(sp.count, slots * chunk));
  std::vector<std::optional<uint32_t>> staged(slots);  // per slot: the last step that used it
  uint64_t next_slot = 0;

  Range mine{0, sp.count};
  std::vector<Touched> written;                     // the latest writer of each part of `mine`
  std::vector<Range> given(rounds);                 // per round, the half sent away
  std::vector<std::vector<Touched>> reads(rounds);  // per round, its sends
  for (int i = 0; i < rounds; ++i) {
    const int partner = self ^ (n >> (i + 1));
    const bool keep_lower = self < partner;
    const Range keep = keep_lower ? lower_half(mine) : upper_half(mine);
    given[i] = keep_lower ? upper_half(mine) : lower_half(mine);
    for (const Range& c : forwarding_order(given[i], chunk, partner, n, i, rounds)) {
      const BufRef from = i == 0 ? sp.input(c.offset) : sp.output(c.offset);
      const uint64_t j = (c.offset - given[i].offset) / chunk;
      const uint32_t sent = sp.add(send(sp.peer(partner), sp.tag(i, per_phase, j), from, c.count),
                                   i == 0 ? std::vector<uint32_t>{} : steps_over(written, c));
      reads[i].push_back({c, sent});
    }
    std::vector<Touched> combined;
    for (const Range& c : forwarding_order(keep, chunk, self, n, i, rounds)) {
      const uint64_t j = (c.offset - keep.offset) / chunk;
      const uint64_t slot = next_slot++ % slots;
      const BufRef ours = i == 0 ? sp.input(c.offset) : sp.output(c.offset);
      std::vector<uint32_t> deps = i == 0 ? std::vector<uint32_t>{} : steps_over(written, c);
      if (staged[slot]) deps.push_back(*staged[slot]);
      staged[slot] = sp.add(recv_reduce(sp.peer(partner), sp.tag(i, per_phase, j), ours, sp.output(c.offset),
                                        sp.scratch(slot * chunk), c.count),
                            deps);
      combined.push_back({c, *staged[slot]});
    }
    written = std::move(combined);
    mine = keep;
  }
  // This member's range is reduced over every member: finalized before anyone receives it.
  for (const Range& c : chunks_of(mine, chunk))
    if (const auto fin = sp.add_finalize(sp.output(c.offset), c.count, steps_over(written, c)))
      written.push_back({c, *fin});

  for (int i = rounds - 1; i >= 0; --i) {
    const int partner = self ^ (n >> (i + 1));
    const uint64_t phase = static_cast<uint64_t>(2 * rounds - 1 - i);
    for (const Range& c : chunks_of(mine, chunk)) {
      const uint64_t j = (c.offset - mine.offset) / chunk;
      sp.add(send(sp.peer(partner), sp.tag(phase, per_phase, j), sp.output(c.offset), c.count), steps_over(written, c));
    }
    // The partner's half lands where this member's own copy of it was read from in round i.
    for (const Range& c : chunks_of(given[i], chunk)) {
      const uint64_t j = (c.offset - given[i].offset) / chunk;
      written.push_back({c, sp.add(recv(sp.peer(partner), sp.tag(phase, per_phase, j), sp.output(c.offset), c.count),
                                   steps_over(reads[i], c))});
    }
    mine = {std::min(mine.offset, given[i].offset), mine.count + given[i].count};
  }
}

Traffic halving_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members) {
  const ClusterView& view = *request.cluster;
  Traffic t(view);
  const int n = static_cast<int>(members.size()), rounds = halving_rounds(n);
  const uint64_t chunk = chunk_elems(request);
  // Member 0's range in each round; every member's is as long, give or take an element.
  Range range{0, request.count};
  double latency = 0;
  for (int i = 0; i < rounds; ++i) {
    const int m = n >> (i + 1);
    const double messages = static_cast<double>(chunk_count(lower_half(range).count, chunk));
    double slowest = 0;
    for (int v = 0; v < n; ++v) {
      const int w = v ^ m;
      // Both halves of the round (each member sends the half on the other side of bit m), in the
      // reduce-scatter and again in the all-gather.
      const double sent =
          static_cast<double>((v < w ? upper_half(range) : lower_half(range)).count * request.elem_size);
      t.transfer(members[v], members[w], sent, true, messages);
      t.transfer(members[v], members[w], sent, false, messages);
      slowest = std::max(slowest, view.tier_between(members[v], members[w]).latency_s);
    }
    latency += 2 * slowest;
    range = lower_half(range);
  }
  t.hops(1, latency);
  return t;
}

}  // namespace dc
