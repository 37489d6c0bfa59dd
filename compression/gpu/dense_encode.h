// The dense q8 encoder as GPU kernel bodies (DC_HOST_DEVICE): the stages of compression/encoder.cpp
// for a dense spec ("q8", with or without huffman, ef, stochastic rounding), each a loop over its
// items that any grid shape runs whole, writing exactly the CPU encoder's bytes and residuals. The
// CUDA plugin launches one kernel per stage (plugins/cuda/codec_launch.cu); the tests run the same
// bodies on the CPU (emulated_encoder.h). Stages, in order:
//   quantize        item = a q8 block: error-feedback add, block scale, symbols, residual update
//   histogram       item = a chunk: its symbols' histogram (huffman only)
//   build_table     one item: the value code from the histograms, stored form and codes
//   encode_streams  item = a chunk's Huffman stream, into its own slot of the workspace
//   size_chunks     item = a chunk: its bytes
//   place_chunks    one item: where each chunk starts (a prefix sum), the message's size
//   write_chunks    item = a chunk: kind, scales, streams or symbols, its CRC32C in the chunk table
//   write_header    one item: the fixed header, the value table, the header's CRC32C
// The single-item stages are small: a histogram of 256 symbols, a prefix sum over the chunks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compression/element.h"
#include "compression/form/spec.h"
#include "compression/form/wire_format.h"
#include "compression/gpu/bits.h"
#include "compression/gpu/crc32c.h"
#include "compression/gpu/flags.h"
#include "compression/gpu/huffman_code.h"
#include "compression/gpu/message_header.h"
#include "compression/quantize.h"
#include "compression/rng.h"
#include "kernels/element_kernels.h"

namespace dc::compression::gpu {

// What the stages share besides the big arrays: written by one stage, read by the later ones.
struct DenseEncodeState {
  uint32_t nonfinite;  // some element (plus residual) was NaN or infinite
  uint32_t table_bytes;
  uint32_t header_bytes;
  uint32_t message_bytes;
  uint32_t counts[wire::kValueAlphabet];  // the message's histogram of symbols
  CodeLengths code;
  uint32_t codes[wire::kValueAlphabet];  // bit-reversed code | length << 16
  CanonicalScratch canonical;
  uint8_t table[kMaxStoredTableBytes + 8];
};

// Everything a dense encode reads and writes. Sizes and the workspace's layout come from
// DenseEncodeLayout (emulated_encoder.h computes it on the host).
struct DenseEncodeArgs {
  const void* input;
  ElemType type;
  float* residual;  // null without error feedback
  float beta;
  Rounding rounding;
  RoundingKey key;
  bool huffman;
  uint64_t count;
  uint32_t chunk_log2;
  uint32_t block;
  uint32_t chunks;
  uint32_t blocks_per_chunk;  // of a whole chunk
  uint64_t blocks;            // q8 blocks of the message
  size_t stream_capacity;     // bytes of one stream's slot

  uint8_t* symbols;            // count
  float* scales;               // blocks
  uint32_t* histograms;        // chunks x 256
  uint32_t* stream_sizes;      // chunks x kMaxStreams
  uint8_t* streams;            // chunks x kMaxStreams x stream_capacity
  uint32_t* chunk_ends;        // chunks: byte sizes, then end offsets in the message
  DenseEncodeState* state;     // zeroed before the first stage
  PackageMergeScratch* merge;  // build_table's
  const CrcTables* crc;
  uint8_t* message;  // at least max_message_bytes(spec, count)
};

namespace {

DC_HOST_DEVICE inline uint64_t chunk_begin(const DenseEncodeArgs& a, uint32_t c) { return uint64_t(c) << a.chunk_log2; }
DC_HOST_DEVICE inline uint32_t chunk_len(const DenseEncodeArgs& a, uint32_t c) {
  const uint64_t rest = a.count - chunk_begin(a, c), whole = uint64_t(1) << a.chunk_log2;
  return uint32_t(rest < whole ? rest : whole);
}
DC_HOST_DEVICE inline uint32_t chunk_blocks(const DenseEncodeArgs& a, uint32_t c) {
  return uint32_t(wire::div_ceil(chunk_len(a, c), a.block));
}

template <ElemType T>
DC_HOST_DEVICE float accumulated_value(const DenseEncodeArgs& a, uint64_t i) {
  const float x = load_elem<T>(a.input, i);
  return a.residual ? x + a.residual[i] : x;
}

// One q8 block (encoder.cpp's quantize_dense_t): the largest finite magnitude, the scale, then
// per element its symbol and residual. Reads a twice rather than holding a block of it.
template <ElemType T>
DC_HOST_DEVICE void quantize_block(const DenseEncodeArgs& a, uint64_t block_index) {
  const uint32_t c = uint32_t(block_index / a.blocks_per_chunk);
  const uint32_t b0 = uint32_t(block_index % a.blocks_per_chunk) * a.block;
  const uint32_t len = chunk_len(a, c);
  const uint32_t n = len - b0 < a.block ? len - b0 : a.block;
  const uint64_t i0 = chunk_begin(a, c) + b0;
  uint32_t max_bits = 0;
  bool specials = false;
  for (uint32_t j = 0; j < n; ++j) {
    const uint32_t ab = float_bits_of(accumulated_value<T>(a, i0 + j)) & kAbsMask;
    if (ab >= kInfBits) specials = true;
    else if (ab > max_bits) max_bits = ab;
  }
  if (specials) raise_flags(&a.state->nonfinite, 1);
  const BlockScale s = block_scale(max_bits);
  a.scales[block_index] = s.scale;
  const uint32_t ikey = index_key(a.key, uint32_t(i0 >> 32));
  for (uint32_t j = 0; j < n; ++j) {
    const float v = accumulated_value<T>(a, i0 + j);
    const uint32_t bits = float_bits_of(v);
    const bool special = (bits & kAbsMask) >= kInfBits;
    const float t = special ? 0.0f : v * s.inv;
    // Clamping is exact where the CPU skips it (nearest rounding of a finite block stays within).
    const float q = clamp_q8(a.rounding == Rounding::nearest ? round_nearest(t)
                                                             : round_stochastic(t, uniform01(ikey, uint32_t(i0) + j)));
    a.symbols[i0 + j] = uint8_t(special ? special_symbol(bits) : zigzag(int32_t(q)));
    if (a.residual) a.residual[i0 + j] = special ? 0.0f : a.beta * (v - q * s.scale);
  }
}

DC_HOST_DEVICE inline void quantize(const kernels::ThreadCoords& t, const DenseEncodeArgs& a) {
  for (uint64_t g = t.first(); g < a.blocks; g += t.stride()) {
    switch (a.type) {
      case ElemType::f16: quantize_block<ElemType::f16>(a, g); break;
      case ElemType::bf16: quantize_block<ElemType::bf16>(a, g); break;
      default: quantize_block<ElemType::f32>(a, g); break;
    }
  }
}

DC_HOST_DEVICE inline void histogram(const kernels::ThreadCoords& t, const DenseEncodeArgs& a) {
  for (uint64_t c = t.first(); c < a.chunks; c += t.stride()) {
    uint32_t* hist = a.histograms + c * wire::kValueAlphabet;
    for (unsigned s = 0; s < wire::kValueAlphabet; ++s) hist[s] = 0;
    const uint8_t* sym = a.symbols + chunk_begin(a, uint32_t(c));
    for (uint32_t j = 0, n = chunk_len(a, uint32_t(c)); j < n; ++j) ++hist[sym[j]];
  }
}

DC_HOST_DEVICE inline void build_table(const kernels::ThreadCoords& t, const DenseEncodeArgs& a) {
  if (t.first() != 0) return;
  DenseEncodeState& st = *a.state;
  for (unsigned s = 0; s < wire::kValueAlphabet; ++s) st.counts[s] = 0;
  for (uint32_t c = 0; c < a.chunks; ++c)
    for (unsigned s = 0; s < wire::kValueAlphabet; ++s)
      st.counts[s] += a.histograms[size_t(c) * wire::kValueAlphabet + s];
  build_code(st.counts, wire::kValueAlphabet, *a.merge, st.code);
  canonical_codes(st.code, wire::kValueAlphabet, st.codes, nullptr, st.canonical);
  st.table_bytes = uint32_t(write_code(st.code, wire::kValueAlphabet, st.table));
}

DC_HOST_DEVICE inline size_t stream_slot(const DenseEncodeArgs& a, uint32_t c, unsigned s) {
  return (size_t(c) * wire::kMaxStreams + s) * a.stream_capacity;
}

DC_HOST_DEVICE inline void encode_streams(const kernels::ThreadCoords& t, const DenseEncodeArgs& a) {
  for (uint64_t item = t.first(); item < uint64_t(a.chunks) * wire::kMaxStreams; item += t.stride()) {
    const uint32_t c = uint32_t(item / wire::kMaxStreams);
    const unsigned s = unsigned(item % wire::kMaxStreams);
    const uint32_t len = chunk_len(a, c);
    const unsigned streams = wire::streams_for(len);
    if (s >= streams) continue;
    const uint64_t b = wire::segment_begin(len, streams, s), e = wire::segment_begin(len, streams, s + 1);
    const uint8_t* sym = a.symbols + chunk_begin(a, c);
    BitSink w(a.streams + stream_slot(a, c, s), a.stream_capacity);
    for (uint64_t j = b; j < e; ++j) {
      const uint32_t code = a.state->codes[sym[j]];
      w.put(code & 0xffff, code >> 16);
    }
    a.stream_sizes[item] = uint32_t(w.finish());  // the slot fits a stream of 11-bit codes
  }
}

DC_HOST_DEVICE inline void size_chunks(const kernels::ThreadCoords& t, const DenseEncodeArgs& a) {
  for (uint64_t c = t.first(); c < a.chunks; c += t.stride()) {
    const uint32_t len = chunk_len(a, uint32_t(c));
    uint32_t bytes = 1 + 4 * chunk_blocks(a, uint32_t(c));
    if (a.huffman) {
      const unsigned streams = wire::streams_for(len);
      bytes += 4 * (streams - 1);
      for (unsigned s = 0; s < streams; ++s) bytes += a.stream_sizes[c * wire::kMaxStreams + s];
    } else {
      bytes += len;
    }
    a.chunk_ends[c] = bytes;
  }
}

DC_HOST_DEVICE inline void place_chunks(const kernels::ThreadCoords& t, const DenseEncodeArgs& a) {
  if (t.first() != 0) return;
  const uint32_t table_bytes = a.huffman ? a.state->table_bytes : 0;
  const uint32_t header = uint32_t(wire::kFixedHeaderBytes + table_bytes + wire::kChunkEntryBytes * a.chunks);
  uint32_t end = header;
  for (uint32_t c = 0; c < a.chunks; ++c) a.chunk_ends[c] = end += a.chunk_ends[c];
  a.state->header_bytes = header;
  a.state->message_bytes = end;
}

DC_HOST_DEVICE inline void write_chunks(const kernels::ThreadCoords& t, const DenseEncodeArgs& a) {
  const size_t table = a.state->header_bytes - wire::kChunkEntryBytes * size_t(a.chunks);
  for (uint64_t item = t.first(); item < a.chunks; item += t.stride()) {
    const uint32_t c = uint32_t(item);
    const uint32_t len = chunk_len(a, c), blocks = chunk_blocks(a, c);
    const size_t begin = c == 0 ? a.state->header_bytes : a.chunk_ends[c - 1];
    uint8_t* out = a.message + begin;
    size_t pos = 0;
    out[pos++] = uint8_t(wire::ChunkKind::dense);
    const float* scales = a.scales + size_t(c) * a.blocks_per_chunk;
    for (uint32_t b = 0; b < blocks; ++b, pos += 4) store_f32(out + pos, scales[b]);
    const uint8_t* sym = a.symbols + chunk_begin(a, c);
    if (!a.huffman) {
      copy_bytes(out + pos, sym, len);
      pos += len;
    } else {
      const unsigned streams = wire::streams_for(len);
      const uint32_t* sizes = a.stream_sizes + size_t(c) * wire::kMaxStreams;
      for (unsigned s = 0; s + 1 < streams; ++s, pos += 4) store_u32(out + pos, sizes[s]);
      for (unsigned s = 0; s < streams; ++s) {
        copy_bytes(out + pos, a.streams + stream_slot(a, c, s), sizes[s]);
        pos += sizes[s];
      }
    }
    store_chunk_entry(a.message + table, c, a.chunk_ends[c], crc32c(*a.crc, 0, out, pos));
  }
}

DC_HOST_DEVICE inline void write_header(const kernels::ThreadCoords& t, const DenseEncodeArgs& a) {
  if (t.first() != 0) return;
  const DenseEncodeState& st = *a.state;
  uint8_t flags = wire::kQ8;
  if (a.huffman) flags |= wire::kHuffman;
  if (a.rounding == Rounding::stochastic) flags |= wire::kStochastic;
  if (st.nonfinite) flags |= wire::kNonFinite;
  write_message_header(a.message, {flags, a.chunk_log2, a.count, a.block, st.header_bytes, st.message_bytes}, st.table,
                       a.huffman ? st.table_bytes : 0, nullptr, 0, *a.crc);
}

// The stages of a dense encode in launch order, each with the items its grid covers: calls
// stage.template operator()<Stage>(items). The CPU emulation and the CUDA plugin both launch it.
template <class Launch>
void for_each_dense_stage(const DenseEncodeArgs& a, Launch&& stage) {
  stage.template operator()<quantize>(a.blocks);
  if (a.huffman) {
    stage.template operator()<histogram>(a.chunks);
    stage.template operator()<build_table>(1);
    stage.template operator()<encode_streams>(uint64_t(a.chunks) * wire::kMaxStreams);
  }
  stage.template operator()<size_chunks>(a.chunks);
  stage.template operator()<place_chunks>(1);
  stage.template operator()<write_chunks>(a.chunks);
  stage.template operator()<write_header>(1);
}

}  // namespace
}  // namespace dc::compression::gpu
