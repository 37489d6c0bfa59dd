// Direct all-reduce for ranks that share memory bandwidth (one host): member k owns block k of n
// balanced blocks. Every member sends chunk j of block k to its owner; the owner receives the n-1
// peers' chunk j one after another and folds each into its output chunk j while that chunk is still
// in cache, then sends the finished chunk to every peer. Memory traffic is (3n-1)S over all ranks
// against the ring's 5(n-1)S, because partial sums never leave the owner. Only the owner computes a
// block, in a fixed peer order, so every rank receives the same bytes. Over sockets it would send
// n-1 messages into each rank at once, so it applies only where the members share memory.
#include <algorithm>
#include <optional>
#include <vector>

#include "src/plan/generators.h"

namespace dc {

using namespace plan_build;

namespace {

Range block(const BuildSpace& sp, int k) { return sp.segment(wrap(k, sp.n())); }

uint64_t chunks_per_block(const BuildSpace& sp) { return chunk_count(sp.longest_segment(), sp.chunk_elems()); }

// The order in which block k's chunks are sent to its owner and summed there: as the ring they
// feed next consumes them (BuildSpace::feeds_ring_member), else in order.
std::vector<size_t> feed_order(const BuildSpace& sp, Range block) {
  return ring_feed_order(block.count, sp.chunk_elems(), sp.feeds_ring_member, sp.feeds_ring_members);
}

// Reduce-scatter sends: chunk j of block k to owner k, starting with the next member so that the
// owners' first receives are spread over the senders. Returns [k][j]: the send of block k's chunk j.
std::vector<std::vector<uint32_t>> scatter(BuildSpace& sp) {
  const int n = sp.n(), r = sp.self;
  const uint64_t chunk = sp.chunk_elems(), per_block = chunks_per_block(sp);
  std::vector<std::vector<uint32_t>> scattered(n);
  for (int i = 1; i < n; ++i) {
    const int k = wrap(r + i, n);
    const std::vector<Range> chunks = split_chunks(block(sp, k).count, chunk);
    scattered[k].resize(chunks.size());
    for (size_t j : feed_order(sp, block(sp, k))) {
      scattered[k][j] = sp.add(
          send(sp.peer(k), sp.tag(0, per_block, j), sp.input(block(sp, k).offset + chunks[j].offset), chunks[j].count));
    }
  }
  return scattered;
}

// Accumulation into the own block, chunk by chunk (in feed order), peer after peer. A transport
// that hands a message over in pieces has each piece reduced while it is in cache; otherwise it
// lands in one of the round-robin staging slots first (two chunks' worth, so transfers overlap
// reductions).
// Returns, per chunk of the own block, the step that finished it.
std::vector<uint32_t> accumulate(BuildSpace& sp) {
  const int n = sp.n(), r = sp.self;
  const uint64_t chunk = sp.chunk_elems(), per_block = chunks_per_block(sp);
  const Range own = block(sp, r);
  const std::vector<Range> own_chunks = split_chunks(own.count, chunk);
  const uint64_t slots = std::min<uint64_t>(own_chunks.size() * (n - 1), 2 * static_cast<uint64_t>(n - 1));
  const uint64_t slot_elems = std::min(chunk, own.count);
  sp.reserve_scratch(slots * slot_elems);
  std::vector<std::optional<uint32_t>> slot_user(slots);  // the last reduction that read the slot
  std::vector<uint32_t> finished(own_chunks.size());
  uint64_t next_slot = 0;
  for (size_t j : feed_order(sp, own)) {
    const Range& c = own_chunks[j];
    const uint64_t at = own.offset + c.offset;
    std::optional<uint32_t> partial;
    for (int i = 1; i < n; ++i) {
      const uint64_t slot = next_slot++ % slots;
      std::vector<uint32_t> deps = after(slot_user[slot]);
      if (partial && partial != slot_user[slot]) deps.push_back(*partial);
      partial = sp.add(recv_reduce(sp.peer(r - i), sp.tag(0, per_block, j), partial ? sp.output(at) : sp.input(at),
                                   sp.output(at), sp.scratch(slot * slot_elems), c.count),
                       deps);
      slot_user[slot] = partial;
    }
    finished[j] = sp.add_finalize(sp.output(at), c.count, after(partial)).value_or(*partial);
  }
  return finished;
}

// All-gather: the finished chunks go to every peer; block k comes from its owner. In place, a
// received chunk overwrites input the owner may still be reading, so it waits for that send.
void gather(BuildSpace& sp, uint64_t phase, const std::vector<uint32_t>& finished,
            const std::vector<std::vector<uint32_t>>& scattered) {
  const int n = sp.n(), r = sp.self;
  const uint64_t chunk = sp.chunk_elems(), per_block = chunks_per_block(sp);
  const Range own = block(sp, r);
  const std::vector<Range> own_chunks = split_chunks(own.count, chunk);
  for (int i = 1; i < n; ++i) {
    for (size_t j = 0; j < own_chunks.size(); ++j) {
      const Range& c = own_chunks[j];
      sp.add(send(sp.peer(r + i), sp.tag(phase, per_block, j), sp.output(own.offset + c.offset), c.count),
             finished.empty() ? std::vector<uint32_t>{} : std::vector<uint32_t>{finished[j]});
    }
  }
  for (int i = 1; i < n; ++i) {
    const int from = wrap(r - i, n);
    const std::vector<Range> chunks = split_chunks(block(sp, from).count, chunk);
    for (size_t j = 0; j < chunks.size(); ++j) {
      const Range& c = chunks[j];
      const bool wait_for_send = sp.request->in_place && !scattered.empty();
      sp.add(recv(sp.peer(from), sp.tag(phase, per_block, j), sp.output(block(sp, from).offset + c.offset), c.count),
             wait_for_send ? std::vector<uint32_t>{scattered[from][j]} : std::vector<uint32_t>{});
    }
  }
}

}  // namespace

int direct_owned_segment(int member, int) { return member; }

void build_direct_allreduce(BuildSpace& sp) {
  const auto scattered = scatter(sp);
  const auto finished = accumulate(sp);
  gather(sp, 1, finished, scattered);
}

void build_direct_allreduce_scatter_half(BuildSpace& sp) {
  scatter(sp);
  accumulate(sp);
}

void build_direct_allreduce_gather_half(BuildSpace& sp) { gather(sp, 0, {}, {}); }

Traffic direct_allreduce_traffic(const PlanRequest& request, const std::vector<int>& members) {
  Traffic t(*request.cluster);
  const int n = static_cast<int>(members.size());
  const double block = static_cast<double>(request.count * request.elem_size) / n;
  for (int o = 0; o < n; ++o) {
    const int owner = members[o];
    const double messages = ring_segment(request.count, n, o).count > 0;  // an empty part sends nothing
    // The owner folds each peer's chunk into its own while that stays in cache: the peer's bytes
    // are read once, its own input read once and the result written once.
    for (int peer : members) {
      if (peer == owner) continue;
      t.transfer(peer, owner, block, false, messages);
      t.memory(owner, -block);  // read straight into the cached partial sum: no write of its own
      t.transfer(owner, peer, block, false, messages);
    }
    t.memory(owner, 2 * block);
  }
  // Each owner takes n-1 messages in and sends n-1 out, one after another on its engine.
  t.hops(2 * (n - 1), members[0], members[n - 1]);
  return t;
}

Traffic direct_half_traffic(const PlanRequest& request, const std::vector<int>& members,
                            const std::vector<double>& owned_bytes, bool scatter) {
  Traffic t(*request.cluster);
  const int n = static_cast<int>(members.size());
  for (int o = 0; o < n; ++o) {
    for (int p = 0; p < n; ++p) {
      if (p == o) continue;
      const double messages = owned_bytes[o] > 0;  // an empty part sends nothing
      if (scatter) {
        t.transfer(members[p], members[o], owned_bytes[o], false, messages);
        t.memory(members[o], -owned_bytes[o]);  // folded into the cached partial sum
      } else {
        t.transfer(members[o], members[p], owned_bytes[o], false, messages);
      }
    }
    if (scatter) t.memory(members[o], 2 * owned_bytes[o]);
  }
  t.hops(n - 1, members[0], members[n - 1]);
  return t;
}

}  // namespace dc
