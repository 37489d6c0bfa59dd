// Encoding a buffer into one compressed message (wire_format.h), with optional error feedback.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compression/codec_isa.h"
#include "compression/form/spec.h"
#include "compression/huffman_table.h"
#include "compression/residual.h"
#include "compression/select.h"
#include "deepcomm/deepcomm.h"

namespace dc::compression {

struct EncodeResult {
  size_t bytes = 0;           // message length
  uint64_t sent = 0;          // elements carried: all (dense) or the kept and non-finite ones
  bool nonfinite = false;     // the input (plus residual) had a NaN or an infinity
  Spec applied;               // the spec used: for auto, the choice made
  std::string reason;         // auto: why that choice
  double select_seconds = 0;  // selection or quantization, with error feedback
  double code_seconds = 0;    // code tables and writing the message
};

// Checks an encode's arguments as Encoder::encode does (the GPU encoders too); returns the element
// type. Throws dc::Error(dcInvalidArgument) saying what is wrong.
ElemType check_encode_arguments(const Spec& spec, dcDataType_t type, const void* input, uint64_t count,
                                std::span<const float> residual, size_t out_size);

// Holds scratch memory reused from call to call; one per thread.
class Encoder {
 public:
  explicit Encoder(Isa isa = Isa::best);

  // Encodes `count` elements of `type` (dcFloat32, dcFloat16 or dcBfloat16) into `out`, whose size
  // must be at least max_message_bytes(spec, count). With error feedback in the spec, `residual`
  // (count elements) is added to the input first and updated; otherwise it must be null. `seed`
  // keys stochastic rounding: pass a different one each call (e.g. the step number). Throws
  // dc::Error(dcInvalidArgument) for bad arguments.
  EncodeResult encode(const Spec& spec, dcDataType_t type, const void* input, uint64_t count, Residual* residual,
                      uint64_t seed, std::span<uint8_t> out);
  // The same with the residual as `count` floats (e.g. one block's share of a buffer's), or a
  // default (null) span.
  EncodeResult encode(const Spec& spec, dcDataType_t type, const void* input, uint64_t count, std::span<float> residual,
                      uint64_t seed, std::span<uint8_t> out);

 private:
  struct Chunk {
    uint64_t begin;
    uint32_t len;
    bool sparse;
    size_t entry_begin, entry_end;  // sparse messages: the chunk's elements in entries_
    size_t symbol_offset;           // q8: first symbol in symbols_
    size_t scale_offset;            // q8: first scale in scales_
  };

  bool prepare_dense(const Spec& spec, const AccumulatedView& in, float* residual, uint64_t seed);
  bool prepare_sparse(const Spec& spec, const AccumulatedView& in, uint64_t count, float* residual, uint64_t seed);
  void plan_chunks(const Spec& spec, uint64_t count);
  void build_tables(const Spec& spec);
  size_t write_chunk(const Spec& spec, const Chunk& c, uint8_t* out, size_t capacity) const;
  size_t write_dense_values(const Chunk& c, uint8_t* out, size_t capacity) const;
  size_t write_sparse_values(const Spec& spec, const Chunk& c, uint8_t* out, size_t capacity) const;

  const CodecKernels& kernels_;
  TopKSelector selector_;
  TopKSelector::Result selected_;
  std::vector<Chunk> chunks_;
  std::vector<Candidate> entries_;  // sparse: kept and non-finite elements by index
  std::vector<uint32_t> gaps_;      // per entry, within its chunk
  std::vector<float> floats_;       // per entry: its value (float32 values)
  std::vector<float> dense_values_;
  std::vector<uint8_t> symbols_;
  std::vector<float> scales_;
  HuffmanTable value_table_, gap_table_;
};

}  // namespace dc::compression
