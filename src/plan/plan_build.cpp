#include "src/plan/plan_build.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "base/error.h"

namespace dc::plan_build {

Step send(int peer, uint32_t tag, BufRef src, uint64_t count) {
  Step s;
  s.kind = StepKind::Send;
  s.peer = peer;
  s.tag = tag;
  s.src = src;
  s.count = count;
  return s;
}

Step recv(int peer, uint32_t tag, BufRef dst, uint64_t count) {
  Step s;
  s.kind = StepKind::Recv;
  s.peer = peer;
  s.tag = tag;
  s.dst = dst;
  s.count = count;
  return s;
}

Step recv_reduce(int peer, uint32_t tag, BufRef src, BufRef dst, BufRef aux, uint64_t count) {
  Step s;
  s.kind = StepKind::RecvReduce;
  s.peer = peer;
  s.tag = tag;
  s.src = src;
  s.dst = dst;
  s.aux = aux;
  s.count = count;
  return s;
}

Step reduce(BufRef a, BufRef b, BufRef dst, uint64_t count) {
  Step s;
  s.kind = StepKind::Reduce;
  s.src = a;
  s.aux = b;
  s.dst = dst;
  s.count = count;
  return s;
}

Step copy(BufRef src, BufRef dst, uint64_t count) {
  Step s;
  s.kind = StepKind::Copy;
  s.src = src;
  s.dst = dst;
  s.count = count;
  return s;
}

Step finalize(BufRef dst, uint64_t count) {
  Step s;
  s.kind = StepKind::Finalize;
  s.dst = dst;
  s.count = count;
  return s;
}

uint64_t chunk_elems(const PlanRequest& request) {
  uint64_t elems = request.chunk_bytes / request.elem_size;
  return elems == 0 ? 1 : elems;
}

uint64_t chunk_count(uint64_t count, uint64_t chunk) { return (count + chunk - 1) / chunk; }

std::vector<Range> split_chunks(uint64_t count, uint64_t chunk) {
  std::vector<Range> chunks;
  chunks.reserve(chunk_count(count, chunk));
  for (uint64_t offset = 0; offset < count; offset += chunk) {
    chunks.push_back({offset, std::min(chunk, count - offset)});
  }
  return chunks;
}

Range ring_segment(uint64_t total, int n, int k) {
  uint64_t base = total / n;
  uint64_t extra = total % n;
  uint64_t uk = static_cast<uint64_t>(k);
  return {uk * base + std::min(uk, extra), base + (uk < extra ? 1 : 0)};
}

namespace {

// The ring segment (of n over total) that holds element x < total.
int segment_holding(uint64_t total, int n, uint64_t x) {
  const uint64_t base = total / n, extra = total % n;
  if (x < extra * (base + 1)) return static_cast<int>(x / (base + 1));
  return static_cast<int>(extra + (x - extra * (base + 1)) / base);
}

}  // namespace

std::vector<size_t> ring_feed_order(uint64_t count, uint64_t chunk, int member, int members) {
  const size_t chunks = chunk_count(count, chunk);
  // Per chunk (distance, position in its part): part `member`-d has distance d. A chunk that spans
  // parts takes the earliest key among them.
  using Key = std::pair<int, uint64_t>;
  std::vector<std::pair<Key, size_t>> keyed;
  keyed.reserve(chunks);
  for (size_t i = 0; i < chunks; ++i) {
    const uint64_t begin = i * chunk, end = std::min(count, begin + chunk);
    Key best{members, 0};
    for (int p = segment_holding(count, members, begin); p <= segment_holding(count, members, end - 1); ++p) {
      const Range part = ring_segment(count, members, p);
      best = std::min(best, Key{wrap(member - p, members), (std::max(begin, part.offset) - part.offset) / chunk});
    }
    keyed.emplace_back(best, i);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<size_t> order;
  order.reserve(chunks);
  for (const auto& k : keyed) order.push_back(k.second);
  return order;
}

uint32_t make_tag(uint64_t phase, uint64_t chunks_per_phase, uint64_t chunk) {
  const uint64_t limit = std::numeric_limits<uint32_t>::max();
  if (chunk > limit || (chunks_per_phase != 0 && phase > (limit - chunk) / chunks_per_phase)) {
    fail(dcInvalidArgument, "plan needs more than 2^32 message tags (" + std::to_string(chunks_per_phase) +
                                " chunks per phase); use a larger chunk size");
  }
  return static_cast<uint32_t>(phase * chunks_per_phase + chunk);
}

namespace {

// Offset of a logical buffer inside the one memory that Input and Output share in place.
uint64_t in_place_base(const PlanRequest& request, BufId buf) {
  uint64_t own_block = static_cast<uint64_t>(request.rank) * request.count;
  if (request.collective == dcCollAllGather && buf == BufId::Input) return own_block;
  if (request.collective == dcCollReduceScatter && buf == BufId::Output) return own_block;
  return 0;
}

}  // namespace

Place canonical_place(const PlanRequest& request, BufRef ref) {
  if (ref.buf == BufId::Scratch) return {2, ref.offset};
  if (ref.buf == BufId::Bytes) return {3, ref.offset};
  if (ref.buf == BufId::Residual) return {4, ref.offset};
  if (!request.in_place) return {ref.buf == BufId::Input ? 0 : 1, ref.offset};
  return {0, in_place_base(request, ref.buf) + ref.offset};
}

bool same_place(const PlanRequest& request, BufRef a, BufRef b) {
  const Place pa = canonical_place(request, a), pb = canonical_place(request, b);
  return pa.memory == pb.memory && pa.offset == pb.offset;
}

}  // namespace dc::plan_build
