// Helpers shared by the plan generators: step builders, chunking, ring segments, tags and the
// in-place aliasing rule. Internal to src/plan/.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "src/plan/plan.h"

namespace dc::plan_build {

// A range of elements in some buffer.
struct Range {
  uint64_t offset = 0;
  uint64_t count = 0;
};

inline BufRef input(uint64_t offset) { return {BufId::Input, offset}; }
inline BufRef output(uint64_t offset) { return {BufId::Output, offset}; }
inline BufRef scratch(uint64_t offset) { return {BufId::Scratch, offset}; }

Step send(int peer, uint32_t tag, BufRef src, uint64_t count);
Step recv(int peer, uint32_t tag, BufRef dst, uint64_t count);
// Receives into aux, then dst = src op aux.
Step recv_reduce(int peer, uint32_t tag, BufRef src, BufRef dst, BufRef aux, uint64_t count);
// dst = a op b (local).
Step reduce(BufRef a, BufRef b, BufRef dst, uint64_t count);
Step copy(BufRef src, BufRef dst, uint64_t count);
Step finalize(BufRef dst, uint64_t count);

// Elements per pipelining chunk (at least 1).
uint64_t chunk_elems(const PlanRequest& request);
// Chunk-sized staging slots that a receive-and-reduce pipeline reuses round-robin (the ring's and
// recursive halving's): what a receive writes is still in cache when its reduction reads it.
constexpr uint64_t kStagingSlots = 4;

// Splits [0, count) into chunks of at most `chunk` elements; offsets are relative to the range.
std::vector<Range> split_chunks(uint64_t count, uint64_t chunk);
uint64_t chunk_count(uint64_t count, uint64_t chunk);

// Segment k of n balanced segments of `total` elements (the first total % n get one more).
Range ring_segment(uint64_t total, int n, int k);

// The order in which a reduce-scatter should finish the chunks of a block of `count` elements
// (split_chunks indices) that then feeds member `member` of a ring all-reduce over `members`,
// whose parts are the block's balanced parts: the ring's first step sends part `member` and sums
// part `member`-1 into what arrives, its next step sums part `member`-2, ...; so part `member`
// comes first, then `member`-1, -2, ... (each whole: on 2 x 4 ranks at 1 Gbit/s a 64 MiB
// all-reduce took 4% longer with the first two parts' chunks alternating). One member: in order.
std::vector<size_t> ring_feed_order(uint64_t count, uint64_t chunk, int member, int members);

// Dependency list of at most one step.
inline std::vector<uint32_t> after(std::optional<uint32_t> step) {
  return step ? std::vector<uint32_t>{*step} : std::vector<uint32_t>{};
}

inline int wrap(int value, int n) { return ((value % n) + n) % n; }

// Tag of chunk `chunk` in pipeline phase `phase` when each phase has `chunks_per_phase` chunks.
// Throws dcInvalidArgument when the plan would need more tags than fit (raise chunk_bytes).
uint32_t make_tag(uint64_t phase, uint64_t chunks_per_phase, uint64_t chunk);

// Where a logical place lives: memory 0 is Input (and, in place, Output too), 1 Output, 2 Scratch,
// 3 Bytes, 4 Residual; the offset is in that memory's units.
struct Place {
  int memory = 0;
  uint64_t offset = 0;
};
Place canonical_place(const PlanRequest& request, BufRef ref);

// Whether two places are one memory under the request's in-place rule (see PlanRequest).
bool same_place(const PlanRequest& request, BufRef a, BufRef b);

}  // namespace dc::plan_build
