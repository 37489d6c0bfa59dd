// Analytical traffic of the compressed all-reduces: messages of the spec's expected size (from
// ratios measured on real gradients), and the codecs' work as bytes through memory.
#include <algorithm>

#include "compression/form/message_form.h"
#include "src/plan/generators.h"
#include "src/plan/plan_build.h"

namespace dc {

using plan_build::ring_segment;

namespace {

// The codecs' work in bytes-through-memory equivalents (codec_bench, docs/compression.md): an
// encode (selection or quantization, error feedback, coding) runs at about a quarter of memcpy's
// rate, a dense decode at about half of it; memcpy moves 2 bytes through memory per byte copied.
constexpr double kEncodeSlowdown = 4, kDenseDecodeSlowdown = 2;

double encode_work(const PlanRequest& q, double elems) {
  return 2 * kEncodeSlowdown * elems * static_cast<double>(q.elem_size);
}

// Decoding a message of `elems` elements into as many: a dense one touches every element, a sparse
// one its kept elements only; overwriting writes every element too.
double decode_work(const PlanRequest& q, double elems, bool overwrite) {
  const compression::Spec& spec = *q.compression;
  const double bytes = elems * static_cast<double>(q.elem_size);
  double work = overwrite ? bytes : 0;
  if (spec.sparse() || spec.selection == compression::Selection::automatic) {
    const double fraction = spec.fraction > 0 ? spec.fraction : compression::Spec::kDefaultAutoFraction;
    work += 2 * kDenseDecodeSlowdown * fraction * bytes;
  } else {
    work += 2 * kDenseDecodeSlowdown * bytes;
  }
  return work;
}

double message_bytes(const PlanRequest& q, uint64_t elems) {
  return static_cast<double>(compression::expected_message_bytes(*q.compression, elems));
}

// A ring all-gather of one message of `bytes` per member.
void ring_gather(Traffic& t, const std::vector<int>& members, const std::vector<double>& bytes) {
  const int n = static_cast<int>(members.size());
  for (int i = 0; i < n; ++i)
    for (int s = 0; s + 1 < n; ++s) t.transfer(members[i], members[(i + 1) % n], bytes[(i - s + n) % n]);
}

}  // namespace

Traffic twophase_allreduce_traffic(const PlanRequest& q, const std::vector<int>& members) {
  Traffic t(*q.cluster);
  const int n = static_cast<int>(members.size());
  std::vector<double> block_message(n);
  for (int k = 0; k < n; ++k) block_message[k] = message_bytes(q, ring_segment(q.count, n, k).count);
  const double block = static_cast<double>(q.count) / n;
  for (int k = 0; k < n; ++k) {
    for (int j = 0; j < n; ++j) t.transfer(members[j], members[k], block_message[k]);
    // Encodes: n-1 blocks for their owners and the own sum; decodes: n-1 blocks into the sum, and
    // every block once, overwriting.
    t.memory(members[k],
             encode_work(q, n * block) + (n - 1) * decode_work(q, block, false) + n * decode_work(q, block, true));
  }
  ring_gather(t, members, block_message);
  t.hops(n, members.front(), members.back());
  return t;
}

Traffic sparse_allgather_allreduce_traffic(const PlanRequest& q, const std::vector<int>& members) {
  Traffic t(*q.cluster);
  const int n = static_cast<int>(members.size());
  const double count = static_cast<double>(q.count);
  ring_gather(t, members, std::vector<double>(n, message_bytes(q, q.count)));
  for (int m : members)
    t.memory(m, encode_work(q, count) + decode_work(q, count, true) + (n - 1) * decode_work(q, count, false));
  t.hops(n - 1, members.front(), members.back());
  return t;
}

}  // namespace dc
