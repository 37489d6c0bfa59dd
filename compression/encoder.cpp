// The encoder's phases, each parallel over chunks on a GPU: select (global), quantize per chunk,
// histograms into the message's code tables (serial, small), then each chunk coded on its own.
#include "compression/encoder.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <string>

#include "base/error.h"
#include "compression/auto_choice.h"
#include "compression/form/message_form.h"
#include "compression/form/wire_format.h"
#include "compression/quantize.h"
#include "compression/rng.h"
#include "compression/sparse_coder.h"

namespace dc::compression {
namespace {

ElemType elem_type_of(dcDataType_t type) {
  switch (type) {
    case dcFloat32: return ElemType::f32;
    case dcFloat16: return ElemType::f16;
    case dcBfloat16: return ElemType::bf16;
    default:
      fail(dcInvalidArgument,
           "compression takes float32, float16 or bfloat16 buffers, not datatype " + std::to_string(int(type)));
  }
}

[[noreturn]] void capacity_bug() { fail(dcInternalError, "compression: a message outgrew its worst-case size"); }

// q8 of kept values in blocks of `block` kept elements (the same arithmetic as the dense loops);
// residual[index] = beta * (a - sent) for the finite ones.
void quantize_kept(const Candidate* kept, size_t m, uint32_t block, Rounding rounding, RoundingKey key,
                   uint8_t* symbols, float* scales, float* residual, float beta) {
  for (size_t b0 = 0, blk = 0; b0 < m; b0 += block, ++blk) {
    const size_t n = std::min<size_t>(block, m - b0);
    uint32_t max_bits = 0;
    for (size_t j = 0; j < n; ++j) {
      const uint32_t ab = float_bits_of(kept[b0 + j].value) & kAbsMask;
      if (ab < kInfBits) max_bits = std::max(max_bits, ab);
    }
    const BlockScale s = block_scale(max_bits);
    scales[blk] = s.scale;
    for (size_t j = 0; j < n; ++j) {
      const Candidate& c = kept[b0 + j];
      const uint32_t bits = float_bits_of(c.value);
      if ((bits & kAbsMask) >= kInfBits) {
        symbols[b0 + j] = uint8_t(special_symbol(bits));
        continue;
      }
      const float t = c.value * s.inv;
      const float q =
          clamp_q8(rounding == Rounding::nearest ? round_nearest(t) : round_stochastic(t, uniform01(key, c.index)));
      symbols[b0 + j] = uint8_t(zigzag(int32_t(q)));
      if (residual) residual[c.index] = beta * (c.value - q * s.scale);
    }
  }
}

}  // namespace

ElemType check_encode_arguments(const Spec& spec, dcDataType_t type, const void* input, uint64_t count,
                                std::span<const float> residual, size_t out_size) {
  if (residual.data() && residual.size() != count)
    fail(dcInvalidArgument, "compression: residual of " + std::to_string(residual.size()) +
                                " elements for a buffer of " + std::to_string(count));
  const ElemType elem = elem_type_of(type);
  if (count > 0 && input == nullptr) fail(dcInvalidArgument, "compression: null input buffer");
  if (spec.error_feedback && residual.data() == nullptr)
    fail(dcInvalidArgument, "compression spec '" + spec.to_string() + "' has error feedback but no residual was given");
  if (!spec.error_feedback && residual.data() != nullptr)
    fail(dcInvalidArgument,
         "compression spec '" + spec.to_string() + "' has no error feedback (ef) but a residual was given");
  const uint64_t bound = max_message_bytes(spec, count);
  if (out_size < bound)
    fail(dcInvalidArgument, "compression: output of " + std::to_string(out_size) +
                                " bytes is below the worst case of " + std::to_string(bound));
  return elem;
}

Encoder::Encoder(Isa isa) : kernels_(codec_kernels(isa)) {}

void Encoder::plan_chunks(const Spec& spec, uint64_t count) {
  chunks_.clear();
  const uint64_t chunk = uint64_t(1) << spec.chunk_log2;
  for (uint64_t begin = 0; begin < count; begin += chunk)
    chunks_.push_back({begin, uint32_t(std::min(chunk, count - begin)), false, 0, 0, 0, 0});
}

bool Encoder::prepare_dense(const Spec& spec, const AccumulatedView& in, float* residual, uint64_t seed) {
  size_t scale_count = 0;
  for (Chunk& c : chunks_) {
    c.symbol_offset = size_t(c.begin);
    c.scale_offset = scale_count;
    scale_count += wire::div_ceil(c.len, spec.block);
  }
  symbols_.resize(chunks_.empty() ? 0 : size_t(chunks_.back().begin) + chunks_.back().len);
  scales_.resize(scale_count);
  const RoundingKey key = rounding_key(seed);
  bool nonfinite = false;
  for (const Chunk& c : chunks_) {
    const DenseQuantizeArgs args{in,
                                 c.begin,
                                 c.len,
                                 residual,
                                 spec.beta,
                                 spec.block,
                                 spec.rounding,
                                 key,
                                 c.begin,
                                 symbols_.data() + c.symbol_offset,
                                 scales_.data() + c.scale_offset};
    nonfinite |= kernels_.quantize_dense(args);
  }
  return nonfinite;
}

bool Encoder::prepare_sparse(const Spec& spec, const AccumulatedView& in, uint64_t count, float* residual,
                             uint64_t seed) {
  const uint64_t k = kept_target(spec.fraction, count);
  selector_.select(kernels_, in, count, k, spec.selection == Selection::topk_sampled, residual, spec.beta, selected_);
  entries_.resize(selected_.kept.size() + selected_.nonfinite.size());
  std::merge(selected_.kept.begin(), selected_.kept.end(), selected_.nonfinite.begin(), selected_.nonfinite.end(),
             entries_.begin(), [](const Candidate& a, const Candidate& b) { return a.index < b.index; });
  floats_.resize(entries_.size());
  gaps_.resize(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) floats_[i] = entries_[i].value;

  // Which entries fall in each chunk, and whether the chunk is sparse (at most 1 in 8 kept).
  size_t e = 0, symbols = 0, scales = 0;
  for (Chunk& c : chunks_) {
    c.entry_begin = e;
    int64_t prev = -1;
    while (e < entries_.size() && entries_[e].index < c.begin + c.len) {
      const int64_t offset = int64_t(entries_[e].index - c.begin);
      gaps_[e++] = uint32_t(offset - prev);
      prev = offset;
    }
    c.entry_end = e;
    const uint64_t m = c.entry_end - c.entry_begin;
    c.sparse = m * wire::kSparseDensity <= c.len;
    c.symbol_offset = symbols;
    c.scale_offset = scales;
    const uint64_t items = c.sparse ? m : c.len;
    symbols += items;
    scales += wire::div_ceil(items, spec.block);
  }

  // What is sent: kept values as they are (float32) or quantized. Residuals of unsent elements
  // are already beta * a; those of sent ones become beta * (a - sent).
  const RoundingKey key = rounding_key(seed);
  if (!spec.q8) {
    if (residual)
      for (const Candidate& c : selected_.kept) residual[c.index] = 0.0f;
    return !selected_.nonfinite.empty();
  }
  symbols_.resize(symbols);
  scales_.resize(scales);
  for (const Chunk& c : chunks_) {
    const Candidate* first = entries_.data() + c.entry_begin;
    const size_t m = c.entry_end - c.entry_begin;
    uint8_t* sym = symbols_.data() + c.symbol_offset;
    float* scl = scales_.data() + c.scale_offset;
    if (c.sparse) {
      quantize_kept(first, m, spec.block, spec.rounding, key, sym, scl, residual, spec.beta);
      continue;
    }
    // A dense chunk of a sparse message: the unsent elements are zeros, blocks run over positions.
    dense_values_.assign(c.len, 0.0f);
    for (size_t j = 0; j < m; ++j) dense_values_[first[j].index - c.begin] = first[j].value;
    const DenseQuantizeArgs args{{dense_values_.data(), ElemType::f32, nullptr},
                                 0,
                                 c.len,
                                 nullptr,
                                 1.0f,
                                 spec.block,
                                 spec.rounding,
                                 key,
                                 c.begin,
                                 sym,
                                 scl};
    kernels_.quantize_dense(args);
    if (!residual) continue;
    for (size_t j = 0; j < m; ++j) {
      const uint32_t off = uint32_t(first[j].index - c.begin);
      if (sym[off] >= wire::kSymbolNaN) continue;
      const float sent = float(unzigzag(sym[off])) * scl[off / spec.block];
      residual[first[j].index] = spec.beta * (first[j].value - sent);
    }
  }
  return !selected_.nonfinite.empty();
}

void Encoder::build_tables(const Spec& spec) {
  uint32_t values[wire::kValueAlphabet] = {};
  uint32_t gaps[wire::kGapAlphabet] = {};
  for (const Chunk& c : chunks_) {
    const size_t m = c.entry_end - c.entry_begin;
    if (spec.q8) kernels_.byte_histogram(symbols_.data() + c.symbol_offset, c.sparse ? m : c.len, values);
    if (c.sparse)
      for (size_t e = c.entry_begin; e < c.entry_end; ++e) ++gaps[std::bit_width(gaps_[e])];
  }
  value_table_ = HuffmanTable::build(values, wire::kValueAlphabet);
  gap_table_ = HuffmanTable::build(gaps, wire::kGapAlphabet);
}

size_t Encoder::write_dense_values(const Chunk& c, uint8_t* out, size_t capacity) const {
  // Huffman section: stream sizes, then the streams of each segment.
  const uint8_t* symbols = symbols_.data() + c.symbol_offset;
  const unsigned streams = wire::streams_for(c.len);
  size_t pos = 4 * (streams - 1);
  if (pos > capacity) capacity_bug();
  for (unsigned s = 0; s < streams; ++s) {
    const uint64_t b = wire::segment_begin(c.len, streams, s), e = wire::segment_begin(c.len, streams, s + 1);
    const size_t n = kernels_.huffman_encode(symbols + b, e - b, value_table_.codes(), out + pos, capacity - pos);
    if (n == SIZE_MAX) capacity_bug();
    if (s + 1 < streams) wire::put_u32(out + 4 * s, uint32_t(n));
    pos += n;
  }
  return pos;
}

size_t Encoder::write_sparse_values(const Spec& spec, const Chunk& c, uint8_t* out, size_t capacity) const {
  const size_t m = c.entry_end - c.entry_begin;
  const unsigned streams = wire::streams_for(m);
  size_t pos = 4 * (streams - 1);
  if (pos > capacity) capacity_bug();
  for (unsigned s = 0; s < streams; ++s) {
    const uint64_t b = wire::segment_begin(m, streams, s), e = wire::segment_begin(m, streams, s + 1);
    const uint8_t* symbols = spec.q8 ? symbols_.data() + c.symbol_offset + b : nullptr;
    const size_t n =
        encode_sparse_stream(gaps_.data() + c.entry_begin + b, symbols, floats_.data() + c.entry_begin + b, e - b,
                             gap_table_, spec.q8 ? &value_table_ : nullptr, out + pos, capacity - pos);
    if (n == SIZE_MAX) capacity_bug();
    if (s + 1 < streams) wire::put_u32(out + 4 * s, uint32_t(n));
    pos += n;
  }
  return pos;
}

size_t Encoder::write_chunk(const Spec& spec, const Chunk& c, uint8_t* out, size_t capacity) const {
  const size_t m = c.entry_end - c.entry_begin;
  const uint64_t items = c.sparse ? m : c.len;
  // Sizes of everything but a Huffman section are known up front.
  size_t fixed = 1 + (c.sparse ? 4 : 0) + (spec.q8 ? 4 * wire::div_ceil(items, spec.block) : 0);
  if (!spec.huffman) fixed += c.sparse ? m * (4 + (spec.q8 ? 1 : 4)) : c.len * (spec.q8 ? 1 : 4);
  if (fixed > capacity) capacity_bug();
  size_t pos = 0;
  out[pos++] = uint8_t(c.sparse ? wire::ChunkKind::sparse : wire::ChunkKind::dense);
  if (c.sparse) {
    wire::put_u32(out + pos, uint32_t(m));
    pos += 4;
  }
  if (spec.q8) {
    wire::copy_bytes(out + pos, scales_.data() + c.scale_offset, 4 * wire::div_ceil(items, spec.block));
    pos += 4 * wire::div_ceil(items, spec.block);
  }
  if (!c.sparse) {
    if (!spec.q8) {  // float32 values, zeros where nothing is sent
      std::memset(out + pos, 0, 4 * size_t(c.len));
      for (size_t e = c.entry_begin; e < c.entry_end; ++e)
        wire::put_f32(out + pos + 4 * (entries_[e].index - c.begin), floats_[e]);
      return pos + 4 * size_t(c.len);
    }
    if (!spec.huffman) {
      wire::copy_bytes(out + pos, symbols_.data() + c.symbol_offset, c.len);
      return pos + c.len;
    }
    return pos + write_dense_values(c, out + pos, capacity - pos);
  }
  if (spec.huffman) return pos + write_sparse_values(spec, c, out + pos, capacity - pos);
  for (size_t e = c.entry_begin; e < c.entry_end; ++e, pos += 4)
    wire::put_u32(out + pos, uint32_t(entries_[e].index - c.begin));
  if (spec.q8) {
    wire::copy_bytes(out + pos, symbols_.data() + c.symbol_offset, m);
    return pos + m;
  }
  wire::copy_bytes(out + pos, floats_.data() + c.entry_begin, 4 * m);
  return pos + 4 * m;
}

EncodeResult Encoder::encode(const Spec& spec, dcDataType_t type, const void* input, uint64_t count, Residual* residual,
                             uint64_t seed, std::span<uint8_t> out) {
  if (residual && residual->count() != count)
    fail(dcInvalidArgument, "compression: residual of " + std::to_string(residual->count()) +
                                " elements for a buffer of " + std::to_string(count));
  static float none;  // a residual of 0 elements still says "error feedback on"
  return encode(spec, type, input, count,
                residual ? std::span<float>(count ? residual->data() : &none, count) : std::span<float>(), seed, out);
}

EncodeResult Encoder::encode(const Spec& spec, dcDataType_t type, const void* input, uint64_t count,
                             std::span<float> residual_span, uint64_t seed, std::span<uint8_t> out) {
  float* residual = residual_span.data();
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const ElemType elem = check_encode_arguments(spec, type, input, count, residual_span, out.size());

  EncodeResult result;
  result.applied = spec;
  float* r = residual;
  const AccumulatedView in{input, elem, r};
  if (spec.selection == Selection::automatic) {
    const AutoChoice choice = choose_auto(in, count, spec);
    result.applied.selection = choice.sparse ? Selection::topk_sampled : Selection::dense;
    result.reason = choice.reason;
  }
  const Spec& s = result.applied;
  plan_chunks(s, count);
  if (s.sparse()) {
    result.nonfinite = prepare_sparse(s, in, count, r, seed);
    result.sent = entries_.size();
  } else {
    result.nonfinite = prepare_dense(s, in, r, seed);
    result.sent = count;
  }
  const Clock::time_point selected = Clock::now();
  result.select_seconds = std::chrono::duration<double>(selected - start).count();
  if (s.huffman) build_tables(s);

  // Header, tables, chunk table, then the chunks in order.
  uint8_t* msg = out.data();
  size_t pos = wire::kFixedHeaderBytes;
  uint8_t table_buf[max_table_bytes(wire::kValueAlphabet) + 8];
  if (s.huffman && s.q8) {
    const size_t n = value_table_.write(table_buf);
    std::memcpy(msg + pos, table_buf, n);
    pos += n;
  }
  if (s.huffman && s.sparse()) {
    const size_t n = gap_table_.write(table_buf);
    std::memcpy(msg + pos, table_buf, n);
    pos += n;
  }
  const size_t chunk_table = pos;
  const size_t header_bytes = chunk_table + wire::kChunkEntryBytes * chunks_.size();
  pos = header_bytes;
  for (size_t i = 0; i < chunks_.size(); ++i) {
    const size_t begin = pos;
    pos += write_chunk(s, chunks_[i], msg + pos, out.size() - pos);
    wire::put_u32(msg + chunk_table + wire::kChunkEntryBytes * i, uint32_t(pos));
    wire::put_u32(msg + chunk_table + wire::kChunkEntryBytes * i + 4, kernels_.crc32c(0, msg + begin, pos - begin));
  }

  uint8_t flags = 0;
  if (s.sparse()) flags |= wire::kSparse;
  if (s.q8) flags |= wire::kQ8;
  if (s.huffman) flags |= wire::kHuffman;
  if (s.q8 && s.rounding == Rounding::stochastic) flags |= wire::kStochastic;
  if (result.nonfinite) flags |= wire::kNonFinite;
  wire::put_u32(msg, wire::kMagic);
  msg[4] = wire::kVersion;
  msg[5] = flags;
  msg[6] = uint8_t(s.chunk_log2);
  msg[7] = 0;
  wire::put_u64(msg + 8, count);
  wire::put_u32(msg + 16, s.q8 ? s.block : 0);
  wire::put_u32(msg + 20, uint32_t(header_bytes));
  wire::put_u32(msg + 24, uint32_t(pos));
  wire::put_u32(msg + wire::kHeaderCrcOffset, 0);
  wire::put_u32(msg + wire::kHeaderCrcOffset, kernels_.crc32c(0, msg, header_bytes));
  result.bytes = pos;
  result.code_seconds = std::chrono::duration<double>(Clock::now() - selected).count();
  return result;
}

}  // namespace dc::compression
