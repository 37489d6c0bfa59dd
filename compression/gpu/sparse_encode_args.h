// What the stages of a sparse encode share (topk_select.h selects, sparse_encode.h codes): the
// arguments, the small state one stage leaves for the next, and the item accessors. Sizes and the
// workspace's layout come from sparse_encode_layout.h, computed on the host.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compression/element.h"
#include "compression/form/spec.h"
#include "compression/form/wire_format.h"
#include "compression/gpu/crc32c.h"
#include "compression/gpu/huffman_code.h"
#include "compression/quantize.h"
#include "compression/rng.h"
#include "kernels/element_kernels.h"

namespace dc::compression::gpu {

// An element that is sent (or a candidate for it): its index and a = input + residual. A
// non-finite a is NaN (canonical) or +-Inf; every other value is finite.
struct Entry {
  uint32_t index;
  float value;
};

// Elements per scan block: the unit whose admitted elements are counted, then written in order.
constexpr uint32_t kScanElements = 4096;
// Buckets of the exact top-k's magnitude histogram: exponent and 3 mantissa bits.
constexpr unsigned kMagnitudeShift = 20;
constexpr unsigned kMagnitudeBuckets = 1u << (31 - kMagnitudeShift);
// The rank selection's radix: four passes of 8 bits over a 31-bit magnitude.
constexpr unsigned kRankPasses = 4;
constexpr unsigned kRankDigits = 256;
// A chunk's histograms: the value symbols', then the gap widths'.
constexpr unsigned kHistogramWords = wire::kValueAlphabet + wire::kGapAlphabet;

// One rank selection: the rank-th largest of n magnitudes (from `bits`, or the finite entries'
// values), found a digit per pass. Afterwards `prefix` is that value and `need` how many of the
// items equal to it make up the rank (the rest lie above it).
struct RankQuery {
  uint32_t active;  // 0: nothing to select (every item is kept, or there is no sample)
  uint32_t pass;
  uint64_t rank;
  uint64_t need;
  uint32_t prefix;
  uint32_t histogram[kRankPasses][kRankDigits];
};

enum RankSource : unsigned { kRankSamples = 0, kRankAdmitted = 1 };

struct SparseEncodeState {
  uint32_t threshold;  // magnitude bits at or above which an element is admitted
  uint32_t magnitudes[kMagnitudeBuckets];
  RankQuery rank[2];  // of the samples (sampled top-k), of the admitted elements
  uint64_t admitted;  // finite admitted elements, at admitted[0, admitted)
  uint64_t nonfinite;
  uint64_t entries;         // elements sent
  uint32_t table_bytes[2];  // the value table's, the gap table's
  uint32_t header_bytes;
  uint32_t message_bytes;
  uint32_t value_counts[wire::kValueAlphabet];
  uint32_t gap_counts[wire::kGapAlphabet];
  CodeLengths value_code, gap_code;
  uint32_t value_codes[wire::kValueAlphabet];  // bit-reversed code | length << 16
  uint32_t gap_codes[wire::kGapAlphabet];
  CanonicalScratch canonical;
  uint8_t tables[2][kMaxStoredTableBytes + 8];
};

struct SparseEncodeArgs {
  const void* input;
  ElemType type;
  float* residual;  // null without error feedback
  float beta;
  bool sampled;  // the sampled threshold (else the exact top-k)
  bool q8;
  Rounding rounding;
  RoundingKey key;
  bool huffman;
  uint64_t count;
  uint64_t k;        // kept_target(fraction, count)
  uint64_t samples;  // sampled: the sample's size and the rank of its threshold
  uint64_t sample_rank;
  uint32_t chunk_log2;
  uint32_t block;
  uint32_t chunks;
  uint32_t blocks_per_chunk;  // of a whole chunk
  uint64_t scan_blocks;       // div_ceil(count, kScanElements)
  size_t stream_capacity;     // bytes of one stream's slot

  uint32_t* sample_bits;     // samples
  uint32_t* scan_counts;     // scan_blocks x 2: admitted and non-finite, then where each block's go
  Entry* admitted;           // count: finite admitted from the front, non-finite from the back
  uint32_t* keep_counts;     // scan_blocks x 3: kept, equal to the boundary, then placed
  Entry* entries;            // count: what is sent, by index
  uint32_t* chunk_entries;   // chunks x 2: the chunk's entries [begin, end)
  uint8_t* symbols;          // count: a chunk's q8 symbols from its first element's position
  float* scales;             // chunks x blocks_per_chunk
  uint32_t* histograms;      // chunks x (256 + 32): value and gap histograms (huffman only)
  uint32_t* stream_sizes;    // chunks x kMaxStreams
  uint8_t* streams;          // chunks x kMaxStreams x stream_capacity
  uint32_t* chunk_ends;      // chunks: byte sizes, then end offsets in the message
  SparseEncodeState* state;  // zeroed before the first stage
  PackageMergeScratch* merge;
  const CrcTables* crc;
  uint8_t* message;  // at least max_message_bytes(spec, count)
};

namespace {

DC_HOST_DEVICE inline uint64_t chunk_begin(const SparseEncodeArgs& a, uint32_t c) {
  return uint64_t(c) << a.chunk_log2;
}
DC_HOST_DEVICE inline uint32_t chunk_len(const SparseEncodeArgs& a, uint32_t c) {
  const uint64_t rest = a.count - chunk_begin(a, c), whole = uint64_t(1) << a.chunk_log2;
  return uint32_t(rest < whole ? rest : whole);
}

// A chunk's entries and the items it codes: its kept elements when sparse (at most one in
// kSparseDensity), else every position.
struct ChunkItems {
  uint32_t first, kept;  // entries [first, first + kept)
  uint32_t len;
  bool sparse;
  DC_HOST_DEVICE uint32_t items() const { return sparse ? kept : len; }
};

DC_HOST_DEVICE inline ChunkItems chunk_items(const SparseEncodeArgs& a, uint32_t c) {
  const uint32_t first = a.chunk_entries[2 * size_t(c)], kept = a.chunk_entries[2 * size_t(c) + 1] - first;
  const uint32_t len = chunk_len(a, c);
  return {first, kept, len, uint64_t(kept) * wire::kSparseDensity <= len};
}

DC_HOST_DEVICE inline uint32_t magnitude_of(float v) { return float_bits_of(v) & kAbsMask; }

DC_HOST_DEVICE inline unsigned bit_width(uint32_t v) {
  if (v == 0) return 0;
#if defined(__CUDA_ARCH__)
  return 32 - unsigned(__clz(v));
#else
  return 32 - unsigned(__builtin_clz(v));
#endif
}

}  // namespace
}  // namespace dc::compression::gpu
