// Recursive-doubling all-reduce for small messages: in round k every member swaps its whole
// partial result with the member whose index differs in bit k and combines the two, so after
// log2(n) rounds every member holds the result. A call is log2(n) message hops deep, against the
// binomial tree's 2 log2(n) (reduce up, broadcast down); each member sends log2(n) messages of the
// whole count, so it only pays while the count is small. Both ends of an exchange combine the lower
// half's partial first (lower op higher): every member evaluates the same expression tree over the
// members in order and gets bitwise the same bytes (min and max of signed zeros, NaN payloads).
// With n not a power of two, rem = n - 2^k of the members fold in first: member 2i sends its input
// to member 2i+1 (2i < 2 rem), sits out the rounds, and receives the result from it at the end.
// Its messages are whole vectors, so it applies to small all-reduces only (kDoublingMaxBytes).
#include <algorithm>
#include <optional>
#include <vector>

#include "src/plan/generators.h"
#include "src/plan/tree_shape.h"

namespace dc {

using namespace plan_build;

namespace {

struct Doubling {
  int rem = 0;     // members beyond the largest power of two: as many pairs fold in
  int rounds = 0;  // exchanges among the 2^rounds members that take part
};

Doubling doubling_shape(int n) {
  Doubling d;
  while ((2 << d.rounds) <= n) ++d.rounds;
  d.rem = n - (1 << d.rounds);
  return d;
}

// Member index of the exchange rounds' participant v (odd members of the folded pairs, then the
// rest), and the reverse for a participant.
int member_of(int v, const Doubling& d) { return v < d.rem ? 2 * v + 1 : v + d.rem; }
int participant_of(int member, const Doubling& d) { return member < 2 * d.rem ? member / 2 : member - d.rem; }
bool sits_out(int member, const Doubling& d) { return member < 2 * d.rem && member % 2 == 0; }

// One chunk's partial result on this member while the plan is built: where it is and the step
// that last wrote it.
struct Partial {
  BufRef at;
  std::optional<uint32_t> written;
};

}  // namespace

bool doubling_allreduce_applicable(const PlanRequest& request, const std::vector<int>&) {
  return request.count * request.elem_size <= kDoublingMaxBytes;
}

void build_doubling_allreduce(BuildSpace& sp) {
  const int self = sp.self;
  const Doubling d = doubling_shape(sp.n());
  const std::vector<Range> chunks = split_chunks(sp.count, sp.chunk_elems());
  const uint64_t per_phase = chunks.size();
  const uint64_t fold_out_phase = d.rounds + 1;  // phase 0 folds in, 1..rounds exchange

  if (sits_out(self, d)) {
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      const uint32_t sent = sp.add(send(sp.peer(self + 1), sp.tag(0, per_phase, j), sp.input(c.offset), c.count));
      // In place the result lands where the input was read from: after the send.
      sp.add(recv(sp.peer(self + 1), sp.tag(fold_out_phase, per_phase, j), sp.output(c.offset), c.count), {sent});
    }
    return;
  }

  // Received partials land in two alternating slots of the whole count, so the next round's
  // receive is posted while this round's is combined.
  constexpr uint64_t kSlots = 2;
  sp.reserve_scratch(kSlots * sp.count);
  const int v = participant_of(self, d);
  for (size_t j = 0; j < chunks.size(); ++j) {
    const Range& c = chunks[j];
    Partial mine{sp.input(c.offset), std::nullopt};
    std::optional<uint32_t> slot_reader[kSlots];
    uint64_t next_slot = 0;
    // Receives the peer's partial (sending ours first when `swap`) and combines it with ours into
    // the output, the lower member's partial first.
    auto combine = [&](int peer, uint64_t phase, bool swap) {
      const uint32_t tag = sp.tag(phase, per_phase, j);
      std::vector<uint32_t> deps;  // the output is written: after our send has read it
      if (swap) deps.push_back(sp.add(send(sp.peer(peer), tag, mine.at, c.count), after(mine.written)));
      const uint64_t slot = next_slot++ % kSlots;
      const BufRef theirs = sp.scratch(slot * sp.count + c.offset);
      const uint32_t got = sp.add(recv(sp.peer(peer), tag, theirs, c.count), after(slot_reader[slot]));
      deps.push_back(got);
      if (mine.written) deps.push_back(*mine.written);
      const bool peer_lower = peer < self;
      const uint32_t combined = sp.add(
          reduce(peer_lower ? theirs : mine.at, peer_lower ? mine.at : theirs, sp.output(c.offset), c.count), deps);
      slot_reader[slot] = combined;
      mine = Partial{sp.output(c.offset), combined};
    };
    if (self < 2 * d.rem) combine(self - 1, 0, false);
    for (int k = 0; k < d.rounds; ++k) combine(member_of(v ^ (1 << k), d), 1 + k, true);
    const uint32_t done = sp.add_finalize(sp.output(c.offset), c.count, after(mine.written)).value_or(*mine.written);
    if (self < 2 * d.rem)
      sp.add(send(sp.peer(self - 1), sp.tag(fold_out_phase, per_phase, j), sp.output(c.offset), c.count), {done});
  }
}

Traffic doubling_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members) {
  const ClusterView& view = *request.cluster;
  Traffic t(view);
  const Doubling d = doubling_shape(static_cast<int>(members.size()));
  const double bytes = static_cast<double>(request.count * request.elem_size);
  const uint64_t chunk = chunk_elems(request);
  const double chunks = static_cast<double>(chunk_count(request.count, chunk));
  const double chunk_bytes = static_cast<double>(std::min(chunk, request.count) * request.elem_size);
  // The α of the longest chain of messages: when each member's partial is ready, a message
  // arriving α after its sender's was (and a send ending then too: an exchange's combine
  // overwrites what its send reads); then one α of the slowest pair per further chunk. A chunk
  // crosses the stages one after another (the fill; the link loads count the busiest stage once).
  std::vector<double> ready(members.size(), 0.0);
  double slowest = 0, fill = 0, slowest_fill = 0;
  auto stage = [&](const std::vector<std::pair<int, int>>& pairs, bool both_ways, bool reduce) {
    double crossing = 0;
    for (const auto& [a, b] : pairs) {
      t.transfer(members[a], members[b], bytes, reduce, chunks);
      if (both_ways) t.transfer(members[b], members[a], bytes, reduce, chunks);
      if (reduce) {
        // The received partial lands in a slot, then is combined: one more pass over it.
        t.memory(members[b], bytes);
        if (both_ways) t.memory(members[a], bytes);
      }
      const double alpha = view.tier_between(members[a], members[b]).latency_s;
      if (both_ways) {  // each combines after the other's message and its own send
        ready[a] = ready[b] = std::max(ready[a], ready[b]) + alpha;
      } else {
        ready[b] = std::max(ready[b], ready[a] + alpha);
      }
      slowest = std::max(slowest, alpha);
      crossing = std::max(crossing, edge_transfer_seconds(view, members[a], members[b], chunk_bytes));
    }
    fill += crossing;
    slowest_fill = std::max(slowest_fill, crossing);
  };
  std::vector<std::pair<int, int>> folded;
  for (int i = 0; i < d.rem; ++i) folded.push_back({2 * i, 2 * i + 1});
  if (!folded.empty()) stage(folded, false, true);
  for (int k = 0; k < d.rounds; ++k) {
    std::vector<std::pair<int, int>> pairs;
    for (int v = 0; v < (1 << d.rounds); ++v)
      if ((v & (1 << k)) == 0) pairs.push_back({member_of(v, d), member_of(v | (1 << k), d)});
    stage(pairs, true, true);
  }
  std::vector<std::pair<int, int>> back;
  for (int i = 0; i < d.rem; ++i) back.push_back({2 * i + 1, 2 * i});
  if (!back.empty()) stage(back, false, false);
  t.hops(1, *std::max_element(ready.begin(), ready.end()) + (chunks - 1) * slowest);
  t.pipeline_fill(fill - slowest_fill);
  return t;
}

}  // namespace dc
