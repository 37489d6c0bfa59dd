// The top-k selection of compression/select.cpp as GPU kernel bodies (DC_HOST_DEVICE): the same
// elements, in index order, with the same residuals. The CPU's result is the exact top-k (larger
// magnitude, then lower index) of the finite elements at or above a threshold, plus every
// non-finite element; these stages compute that set directly. Stages, in order (each returns at
// once where the spec does not need it):
//   take_samples         item = a sample (sampled): its magnitude; sets up the samples' rank query
//   magnitude_histogram  item = a scan block (exact): finite magnitudes' top bits, counted atomically
//   rank_histogram<Q>    item = an item of query Q: its digit of this pass, counted atomically
//   rank_digit<Q>        one item: the digit where the count from the top reaches the rank
//                        (the two alternate kRankPasses times per query)
//   pick_threshold       one item: the sample's rank-th magnitude, or the histogram's bucket
//   count_admitted       item = a scan block: its finite elements at or above the threshold, and
//                        its non-finite ones
//   place_admitted       one item: where each block's go (a prefix sum); the admitted rank query
//   write_admitted       item = a scan block: its admitted elements in order, every residual
//   count_kept           item = a block of admitted elements: above the k-th, equal to it
//   place_kept           one item: which equal ones are kept (the lower indices), where each goes
//   write_entries        item = a block of admitted elements, or a non-finite one: the sent
//                        elements merged by index
#pragma once

#include "compression/gpu/flags.h"
#include "compression/gpu/sparse_encode_args.h"
#include "compression/sample_plan.h"

namespace dc::compression::gpu {
namespace {

template <ElemType T>
DC_HOST_DEVICE float accumulated_at(const SparseEncodeArgs& a, uint64_t i) {
  const float x = load_elem<T>(a.input, i);
  return a.residual ? x + a.residual[i] : x;
}

DC_HOST_DEVICE inline float accumulated_at(const SparseEncodeArgs& a, uint64_t i) {
  switch (a.type) {
    case ElemType::f16: return accumulated_at<ElemType::f16>(a, i);
    case ElemType::bf16: return accumulated_at<ElemType::bf16>(a, i);
    default: return accumulated_at<ElemType::f32>(a, i);
  }
}

DC_HOST_DEVICE inline uint64_t scan_block_end(const SparseEncodeArgs& a, uint64_t b) {
  const uint64_t end = (b + 1) * kScanElements;
  return end < a.count ? end : a.count;
}

DC_HOST_DEVICE inline void take_samples(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  if (!a.sampled) return;
  if (t.first() == 0) {
    RankQuery& q = a.state->rank[kRankSamples];
    q.active = a.sample_rank < a.samples;
    q.rank = q.need = a.sample_rank;
  }
  for (uint64_t j = t.first(); j < a.samples; j += t.stride()) {
    const uint32_t ab = magnitude_of(accumulated_at(a, sample_position(a.count, a.samples, j)));
    a.sample_bits[j] = ab < kInfBits ? ab : 0;
  }
}

DC_HOST_DEVICE inline void magnitude_histogram(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  if (a.sampled) return;
  for (uint64_t b = t.first(); b < a.scan_blocks; b += t.stride())
    for (uint64_t i = b * kScanElements, end = scan_block_end(a, b); i < end; ++i) {
      const uint32_t ab = magnitude_of(accumulated_at(a, i));
      if (ab < kInfBits) count_up(&a.state->magnitudes[ab >> kMagnitudeShift], 1);
    }
}

template <unsigned Q>
DC_HOST_DEVICE uint64_t rank_items(const SparseEncodeArgs& a) {
  return Q == kRankSamples ? a.samples : a.state->admitted;
}

template <unsigned Q>
DC_HOST_DEVICE uint32_t rank_value(const SparseEncodeArgs& a, uint64_t i) {
  return Q == kRankSamples ? a.sample_bits[i] : magnitude_of(a.admitted[i].value);
}

template <unsigned Q>
DC_HOST_DEVICE void rank_histogram(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  RankQuery& q = a.state->rank[Q];
  if (!q.active) return;
  const unsigned shift = 8 * (kRankPasses - 1 - q.pass);
  for (uint64_t i = t.first(), n = rank_items<Q>(a); i < n; i += t.stride()) {
    const uint32_t v = rank_value<Q>(a, i);
    if (q.pass > 0 && (v >> (shift + 8)) != q.prefix) continue;
    count_up(&q.histogram[q.pass][(v >> shift) & (kRankDigits - 1)], 1);
  }
}

template <unsigned Q>
DC_HOST_DEVICE void rank_digit(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  RankQuery& q = a.state->rank[Q];
  if (!q.active || t.first() != 0) return;
  // need <= the items matching the prefix (the rank is at most the items), so a digit is found.
  for (unsigned d = kRankDigits; d-- > 0;) {
    const uint32_t here = q.histogram[q.pass][d];
    if (q.need <= here) {
      q.prefix = (q.prefix << 8) | d;
      break;
    }
    q.need -= here;
  }
  ++q.pass;
}

DC_HOST_DEVICE inline void pick_threshold(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  if (t.first() != 0) return;
  SparseEncodeState& st = *a.state;
  if (a.sampled) {
    st.threshold = st.rank[kRankSamples].active ? st.rank[kRankSamples].prefix : 0;
    return;
  }
  // The bucket where the count from the top reaches k bounds the candidates.
  uint64_t above = 0;
  uint32_t bucket = kMagnitudeBuckets;
  while (bucket > 0 && above < a.k) above += st.magnitudes[--bucket];
  st.threshold = bucket << kMagnitudeShift;
}

DC_HOST_DEVICE inline void count_admitted(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  const uint32_t threshold = a.state->threshold;
  for (uint64_t b = t.first(); b < a.scan_blocks; b += t.stride()) {
    uint32_t admitted = 0, nonfinite = 0;
    for (uint64_t i = b * kScanElements, end = scan_block_end(a, b); i < end; ++i) {
      const uint32_t ab = magnitude_of(accumulated_at(a, i));
      if (ab >= kInfBits) ++nonfinite;
      else if (ab >= threshold) ++admitted;
    }
    a.scan_counts[2 * b] = admitted;
    a.scan_counts[2 * b + 1] = nonfinite;
  }
}

DC_HOST_DEVICE inline void place_admitted(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  if (t.first() != 0) return;
  uint32_t admitted = 0, nonfinite = 0;
  for (uint64_t b = 0; b < a.scan_blocks; ++b) {
    const uint32_t here = a.scan_counts[2 * b], here_nonfinite = a.scan_counts[2 * b + 1];
    a.scan_counts[2 * b] = admitted;
    a.scan_counts[2 * b + 1] = nonfinite;
    admitted += here;
    nonfinite += here_nonfinite;
  }
  SparseEncodeState& st = *a.state;
  st.admitted = admitted;
  st.nonfinite = nonfinite;
  RankQuery& q = st.rank[kRankAdmitted];
  q.active = admitted > a.k;
  q.rank = q.need = a.k;
}

// Every residual becomes beta * a (0 where a is not finite); a non-finite element's value is
// what the CPU sends for it: the residual's (beta * a) or a, NaN made canonical.
DC_HOST_DEVICE inline void write_admitted(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  const uint32_t threshold = a.state->threshold;
  Entry* nonfinite_base = a.admitted + (a.count - a.state->nonfinite);
  for (uint64_t b = t.first(); b < a.scan_blocks; b += t.stride()) {
    Entry* out = a.admitted + a.scan_counts[2 * b];
    Entry* out_nonfinite = nonfinite_base + a.scan_counts[2 * b + 1];
    for (uint64_t i = b * kScanElements, end = scan_block_end(a, b); i < end; ++i) {
      const float v = accumulated_at(a, i);
      const uint32_t ab = magnitude_of(v);
      if (a.residual) a.residual[i] = ab >= kInfBits ? 0.0f : a.beta * v;
      if (ab >= kInfBits) {
        const float sent = a.residual ? a.beta * v : v;
        *out_nonfinite++ = {uint32_t(i), magnitude_of(sent) > kInfBits ? float_of_bits(wire::kCanonicalNaN) : sent};
      } else if (ab >= threshold) {
        *out++ = {uint32_t(i), v};
      }
    }
  }
}

DC_HOST_DEVICE inline uint64_t admitted_blocks(const SparseEncodeArgs& a) {
  return wire::div_ceil(a.state->admitted, kScanElements);
}

DC_HOST_DEVICE inline void count_kept(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  const RankQuery& q = a.state->rank[kRankAdmitted];
  const uint64_t n = a.state->admitted;
  for (uint64_t b = t.first(); b < admitted_blocks(a); b += t.stride()) {
    const uint64_t begin = b * kScanElements, end = begin + kScanElements < n ? begin + kScanElements : n;
    uint32_t above = 0, equal = 0;
    if (!q.active) {
      above = uint32_t(end - begin);
    } else {
      for (uint64_t i = begin; i < end; ++i) {
        const uint32_t ab = magnitude_of(a.admitted[i].value);
        above += ab > q.prefix;
        equal += ab == q.prefix;
      }
    }
    a.keep_counts[3 * b] = above;
    a.keep_counts[3 * b + 1] = equal;
  }
}

// The k-th magnitude's equals are kept in index order: the first blocks' take what the rank needs.
DC_HOST_DEVICE inline void place_kept(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  if (t.first() != 0) return;
  const RankQuery& q = a.state->rank[kRankAdmitted];
  uint64_t need = q.active ? q.need : 0;
  uint32_t kept = 0;
  for (uint64_t b = 0; b < admitted_blocks(a); ++b) {
    const uint32_t equal = a.keep_counts[3 * b + 1];
    const uint32_t quota = need < equal ? uint32_t(need) : equal;
    need -= quota;
    a.keep_counts[3 * b + 1] = quota;
    a.keep_counts[3 * b + 2] = kept;
    kept += a.keep_counts[3 * b] + quota;
  }
  a.state->entries = kept + a.state->nonfinite;
}

// Walks a block of admitted elements, calling f(i) for each kept one, in order.
template <class F>
DC_HOST_DEVICE void for_each_kept(const SparseEncodeArgs& a, uint64_t b, uint64_t end, F&& f) {
  const RankQuery& q = a.state->rank[kRankAdmitted];
  uint32_t equal_left = a.keep_counts[3 * b + 1];
  for (uint64_t i = b * kScanElements; i < end; ++i) {
    const uint32_t ab = magnitude_of(a.admitted[i].value);
    if (q.active && ab <= q.prefix) {
      if (ab < q.prefix || equal_left == 0) continue;
      --equal_left;
    }
    f(i);
  }
}

// The first position in [begin, end) of entries whose index is at least `index`.
DC_HOST_DEVICE inline uint64_t lower_bound(const Entry* entries, uint64_t begin, uint64_t end, uint64_t index) {
  while (begin < end) {
    const uint64_t mid = begin + (end - begin) / 2;
    if (entries[mid].index < index) begin = mid + 1;
    else end = mid;
  }
  return begin;
}

DC_HOST_DEVICE inline void write_entries(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  const uint64_t admitted = a.state->admitted, nonfinite = a.state->nonfinite, blocks = admitted_blocks(a);
  const uint64_t nonfinite_begin = a.count - nonfinite;
  for (uint64_t item = t.first(); item < blocks + nonfinite; item += t.stride()) {
    if (item < blocks) {  // kept: its rank among the kept plus the non-finite ones before it
      const uint64_t end = (item + 1) * kScanElements < admitted ? (item + 1) * kScanElements : admitted;
      uint64_t rank = a.keep_counts[3 * item + 2];
      const uint32_t first = a.admitted[item * kScanElements].index;
      uint64_t before = lower_bound(a.admitted, nonfinite_begin, a.count, first) - nonfinite_begin;
      for_each_kept(a, item, end, [&](uint64_t i) {
        const uint32_t index = a.admitted[i].index;
        while (before < nonfinite && a.admitted[nonfinite_begin + before].index < index) ++before;
        a.entries[rank++ + before] = a.admitted[i];
      });
      continue;
    }
    // Non-finite: its rank among them plus the kept ones before it.
    const uint64_t j = item - blocks;
    const Entry e = a.admitted[nonfinite_begin + j];
    const uint64_t p = lower_bound(a.admitted, 0, admitted, e.index);
    uint64_t kept_before = 0;
    if (p > 0) {
      const uint64_t b = (p - 1) / kScanElements;
      kept_before = a.keep_counts[3 * b + 2];
      for_each_kept(a, b, p, [&](uint64_t) { ++kept_before; });
    }
    a.entries[j + kept_before] = e;
  }
}

}  // namespace
}  // namespace dc::compression::gpu
