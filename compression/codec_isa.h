// The codec's hot loops, one set per instruction set (codec_loops.inc compiled with that set's
// flags): every set produces the same bytes and values (tests/compression/isa_test.cpp). The
// encoder and decoders take the set to use; Isa::best is the fastest this CPU runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compression/element.h"
#include "compression/form/spec.h"
#include "compression/rng.h"

namespace dc::compression {

enum class Isa : uint8_t { best, baseline, avx2 };

// A selected element: its index in the buffer and its accumulated value a = input + residual.
struct Candidate {
  uint32_t index;
  float value;
};

// Where a_i comes from: a_i = x_i, plus r_i when r is given (the error-feedback residual).
struct AccumulatedView {
  const void* x;
  ElemType type;
  const float* r;
};

struct ScanCounts {
  uint32_t candidates;
  uint32_t nonfinite;
};

// One chunk of dense q8: elements [begin, begin + len) of `in`.
struct DenseQuantizeArgs {
  AccumulatedView in;
  uint64_t begin;
  uint32_t len;
  float* r_out;  // residual written at [begin, begin + len), or null (no error feedback)
  float beta;
  uint32_t block;
  Rounding rounding;
  RoundingKey key;
  uint64_t rng_index;  // global index of the chunk's first element (stochastic rounding)
  uint8_t* symbols;    // len
  float* scales;       // ceil(len / block)
};

// The bit streams of one Huffman section.
struct StreamsView {
  const uint8_t* data[4];
  size_t size[4];
  unsigned count;
};

struct CodecKernels {
  const char* name;

  uint32_t (*crc32c)(uint32_t crc, const uint8_t* data, size_t size);

  // Exact top-k's first pass over [begin, end): a_i to r_out[i] (if r_out), and a histogram of
  // the finite |a_i| bit patterns >> 20 (2048 buckets).
  void (*accumulate_histogram)(const AccumulatedView& in, uint64_t begin, uint64_t end, float* r_out, uint32_t* hist);

  // Top-k scan over [begin, end): r_out[i] = beta * a_i (if r_out); finite a_i whose magnitude bits
  // are >= thr_bits go to cand, indices of non-finite a_i to nonfinite (both hold end - begin).
  ScanCounts (*scan_candidates)(const AccumulatedView& in, uint64_t begin, uint64_t end, float* r_out, float beta,
                                uint32_t thr_bits, Candidate* cand, uint32_t* nonfinite);

  // Dense q8 of one chunk: symbols, scales and residuals. Returns whether an element was not finite.
  bool (*quantize_dense)(const DenseQuantizeArgs& args);

  void (*byte_histogram)(const uint8_t* data, size_t size, uint32_t* hist256);

  // One Huffman stream of `count` 8-bit symbols; codes[s] = bit-reversed code | length << 16.
  // Returns the bytes written, or SIZE_MAX when `capacity` was too small.
  size_t (*huffman_encode)(const uint8_t* symbols, size_t count, const uint32_t* codes, uint8_t* out, size_t capacity);

  // `count` symbols from the section's streams (segments as wire::segment_begin) through a
  // HuffmanTable's decode_table(). False when a stream does not end exactly.
  bool (*huffman_decode)(const StreamsView& streams, const uint16_t* table, uint8_t* out, size_t count);

  // dst[j] += dequantized symbols[j], j < len; dst is the chunk's first element.
  void (*accumulate_q8)(const uint8_t* symbols, const float* scales, uint32_t block, size_t len, ElemType type,
                        void* dst);
  // dst[j] += float32 values read from unaligned bytes.
  void (*accumulate_f32)(const uint8_t* values, size_t len, ElemType type, void* dst);
  // dst[offsets[j]] += values[j].
  void (*accumulate_sparse)(const uint32_t* offsets, const float* values, size_t m, ElemType type, void* dst);
};

// The loops of `isa`; Isa::best picks AVX2 (with F16C, BMI2, SSE4.2) when built and supported.
// Throws dc::Error(dcInvalidArgument) for a set this build or CPU lacks.
const CodecKernels& codec_kernels(Isa isa = Isa::best);
bool isa_available(Isa isa);

}  // namespace dc::compression

#define DC_DECLARE_CODEC_ISA(isa)     \
  namespace dc::compression::isa {    \
  extern const CodecKernels kKernels; \
  }
DC_DECLARE_CODEC_ISA(baseline)
#if defined(DEEPCOMM_CODECS_AVX2)
DC_DECLARE_CODEC_ISA(avx2)
#endif
#undef DC_DECLARE_CODEC_ISA
