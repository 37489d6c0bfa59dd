// Ring all-reduce: a reduce-scatter over n segments followed by an all-gather, each segment split
// into chunks. Chunk j of ring step s depends only on chunk j of step s-1, so chunks flow around
// the ring concurrently. The segment owner finalizes its fully reduced segment before passing it
// on, so every rank receives the same bytes. The halves also run alone, as phases of a
// hierarchical plan (then the phase tracker orders them after what came before).
#include <algorithm>
#include <optional>
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

namespace {

// What the two halves share when they run in one generator.
struct RingState {
  uint64_t chunk = 1;
  uint64_t chunks_per_step = 0;
  // Per chunk position j: the step that produced the data sent next.
  std::vector<std::optional<uint32_t>> produced;
  // Reduce-scatter sends per step; the all-gather overwrites those places only after them.
  std::vector<std::vector<uint32_t>> scatter_sends;
};

RingState ring_state(const BuildSpace& sp) {
  RingState st;
  st.chunk = sp.chunk_elems();
  st.chunks_per_step = chunk_count(sp.longest_segment(), st.chunk);
  st.produced.resize(st.chunks_per_step);
  return st;
}

// Reduce-scatter: step s sends segment r-s and accumulates segment r-s-1 into the output region;
// member r ends with segment r+1.
void reduce_scatter_half(BuildSpace& sp, RingState& st) {
  const int n = sp.n(), r = sp.self;
  const uint64_t chunk = st.chunk, per_step = st.chunks_per_step;
  const uint64_t longest = sp.longest_segment();
  // Staging for received chunks: a few chunk-sized slots, reused round-robin (chunk j in slot
  // j % slots), so that what a receive writes is still in cache when its reduction reads it. A
  // whole segment of staging would send every received byte through memory twice more.
  const uint64_t slots = std::min<uint64_t>(per_step, kStagingSlots);
  sp.reserve_scratch(std::min(longest, slots * chunk));
  std::vector<std::optional<uint32_t>> staged(slots);  // per slot: the last step that used it
  st.scatter_sends.assign(n - 1, {});
  for (int s = 0; s + 1 < n; ++s) {
    const Range out_seg = sp.segment(wrap(r - s, n));
    for (const Range& c : split_chunks(out_seg.count, chunk)) {
      const uint64_t j = c.offset / chunk;
      const uint64_t at = out_seg.offset + c.offset;
      const BufRef src = s == 0 ? sp.input(at) : sp.output(at);
      st.scatter_sends[s].push_back(
          sp.add(send(sp.peer(r + 1), sp.tag(s, per_step, j), src, c.count), after(st.produced[j])));
    }
    const Range in_seg = sp.segment(wrap(r - s - 1, n));
    for (const Range& c : split_chunks(in_seg.count, chunk)) {
      const uint64_t j = c.offset / chunk;
      const uint64_t at = in_seg.offset + c.offset;
      const uint64_t slot = j % slots;
      std::vector<uint32_t> deps = after(staged[slot]);
      if (st.produced[j] && (!staged[slot] || *st.produced[j] != *staged[slot])) deps.push_back(*st.produced[j]);
      const uint32_t step = sp.add(recv_reduce(sp.peer(r - 1), sp.tag(s, per_step, j), sp.input(at), sp.output(at),
                                               sp.scratch(slot * chunk), c.count),
                                   deps);
      staged[slot] = st.produced[j] = step;
    }
  }
}

// All-gather: step s forwards segment r+1-s and receives segment r-s (tags from `phase0` on).
void all_gather_half(BuildSpace& sp, RingState& st, uint64_t phase0) {
  const int n = sp.n(), r = sp.self;
  const uint64_t chunk = st.chunk, per_step = st.chunks_per_step;
  for (int s = 0; s + 1 < n; ++s) {
    const uint64_t phase = phase0 + static_cast<uint64_t>(s);
    const Range out_seg = sp.segment(wrap(r + 1 - s, n));
    for (const Range& c : split_chunks(out_seg.count, chunk)) {
      const uint64_t j = c.offset / chunk;
      sp.add(send(sp.peer(r + 1), sp.tag(phase, per_step, j), sp.output(out_seg.offset + c.offset), c.count),
             after(st.produced[j]));
    }
    const Range in_seg = sp.segment(wrap(r - s, n));
    for (const Range& c : split_chunks(in_seg.count, chunk)) {
      const uint64_t j = c.offset / chunk;
      // Segment r-s was sent in reduce-scatter step s (from Output, or from Input when in place).
      std::vector<uint32_t> deps;
      if (!st.scatter_sends.empty()) deps.push_back(st.scatter_sends[s][j]);
      st.produced[j] =
          sp.add(recv(sp.peer(r - 1), sp.tag(phase, per_step, j), sp.output(in_seg.offset + c.offset), c.count), deps);
    }
  }
}

}  // namespace

int ring_owned_segment(int member, int n) { return wrap(member + 1, n); }

void build_ring_allreduce(BuildSpace& sp) {
  // Any order of the members gives the same result: take the one that crosses hosts least.
  sp = topology_ordered(sp);
  RingState st = ring_state(sp);
  reduce_scatter_half(sp, st);
  // This rank now holds the fully reduced segment r+1.
  const Range owned = sp.segment(ring_owned_segment(sp.self, sp.n()));
  for (const Range& c : split_chunks(owned.count, st.chunk)) {
    const uint64_t j = c.offset / st.chunk;
    if (auto fin = sp.add_finalize(sp.output(owned.offset + c.offset), c.count, after(st.produced[j])))
      st.produced[j] = fin;
  }
  all_gather_half(sp, st, static_cast<uint64_t>(sp.n() - 1));
}

void build_ring_allreduce_scatter_half(BuildSpace& sp) {
  RingState st = ring_state(sp);
  reduce_scatter_half(sp, st);
}

void build_ring_allreduce_gather_half(BuildSpace& sp) {
  RingState st = ring_state(sp);
  all_gather_half(sp, st, 0);
}

double ring_step_latency(const ClusterView& view, const std::vector<int>& ring) {
  double slowest = 0;
  for (size_t i = 0; i < ring.size(); ++i)
    slowest = std::max(slowest, view.tier_between(ring[i], ring[(i + 1) % ring.size()]).latency_s);
  return slowest;
}

Traffic ring_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members) {
  Traffic t(*request.cluster);
  const std::vector<int> ring = request.cluster->topology_order(members);
  const int n = static_cast<int>(ring.size());
  const double segment = static_cast<double>(request.count * request.elem_size) / n;
  // Empty segments (fewer elements than ranks) send nothing. Member i reduces every segment on
  // but i+1 (the one it owns) and forwards every one but i+2 (the one its successor owns).
  const int filled = static_cast<int>(std::min<uint64_t>(request.count, n));
  auto sent = [&](int except) { return filled - (ring_segment(request.count, n, except % n).count > 0 ? 1 : 0); };
  for (int i = 0; i < n; ++i) {
    const int from = ring[i], to = ring[(i + 1) % n];
    t.transfer(from, to, segment * (n - 1), true, sent(i + 1));   // reduce-scatter
    t.transfer(from, to, segment * (n - 1), false, sent(i + 2));  // all-gather
  }
  t.hops(2 * (n - 1), ring_step_latency(*request.cluster, ring));
  return t;
}

Traffic ring_half_traffic(const PlanRequest& request, const std::vector<int>& members,
                          const std::vector<double>& owned_bytes, bool scatter) {
  Traffic t(*request.cluster);
  const int n = static_cast<int>(members.size());
  double total = 0;
  for (double b : owned_bytes) total += b;
  // Member r sends every segment but the one it ends with (scatter: its own; gather: the next
  // member's, which it receives last).
  int filled = 0;
  for (double b : owned_bytes) filled += b > 0;
  for (int r = 0; r < n; ++r) {
    const double kept = owned_bytes[scatter ? r : (r + 1) % n];
    t.transfer(members[r], members[(r + 1) % n], total - kept, scatter, filled - (kept > 0));
  }
  t.hops(n - 1, ring_step_latency(*request.cluster, members));
  return t;
}

}  // namespace dc
