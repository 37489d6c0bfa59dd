#include "compression/decoder.h"

#include <chrono>
#include <cstring>
#include <limits>
#include <string>

#include "base/error.h"
#include "compression/form/wire_format.h"
#include "compression/quantize.h"
#include "compression/sparse_coder.h"

namespace dc::compression {
namespace {

using gpu::DecodeFault;

[[noreturn]] void refuse(DecodeFault fault, uint64_t a = 0, uint64_t b = 0) {
  fail(dcInvalidArgument, decode_error_message({fault, 0, a, b}));
}
[[noreturn]] void refuse_chunk(uint64_t i, DecodeFault fault, uint64_t a = 0, uint64_t b = 0) {
  fail(dcInvalidArgument, decode_error_message({fault, uint32_t(i), a, b}));
}

ElemType target_type(dcDataType_t type) {
  switch (type) {
    case dcFloat32: return ElemType::f32;
    case dcFloat16: return ElemType::f16;
    case dcBfloat16: return ElemType::bf16;
    default: refuse(DecodeFault::target_type, uint32_t(type));
  }
}

MessageForm form_of(const uint8_t* p) {
  const uint8_t flags = p[5];
  return {(flags & wire::kSparse) != 0, (flags & wire::kQ8) != 0, (flags & wire::kHuffman) != 0, wire::get_u32(p + 16),
          p[6]};
}

uint64_t chunk_count_of(uint64_t count, uint32_t log2) { return (count + (uint64_t(1) << log2) - 1) >> log2; }

// Reads a Huffman section of `count` items: S stream sizes, then the streams.
StreamsView split_streams(std::span<const uint8_t> section, uint64_t count, uint32_t chunk) {
  StreamsView v{};
  v.count = wire::streams_for(count);
  const size_t table = 4 * size_t(v.count - 1);
  if (section.size() < table) refuse_chunk(chunk, DecodeFault::truncated_stream_sizes);
  size_t pos = table;
  for (unsigned s = 0; s < v.count; ++s) {
    const size_t size = s + 1 < v.count ? wire::get_u32(section.data() + 4 * s) : section.size() - pos;
    if (size > section.size() - pos) refuse_chunk(chunk, DecodeFault::stream_past_chunk);
    v.data[s] = section.data() + pos;
    v.size[s] = size;
    pos += size;
  }
  return v;
}

}  // namespace

std::string decode_error_message(const gpu::DecodeError& e) {
  const std::string prefix = "compressed message: ", a = std::to_string(e.a), b = std::to_string(e.b);
  const std::string chunk = prefix + "chunk " + std::to_string(e.chunk);
  switch (e.fault) {
    case DecodeFault::truncated_prefix: return prefix + "truncated: " + a + " bytes do not hold the header";
    case DecodeFault::bad_magic: return prefix + "not a DeepComm compressed message (bad magic)";
    case DecodeFault::version:
      return prefix + "version " + a + ", this library reads version " + std::to_string(wire::kVersion);
    case DecodeFault::unknown_flags: return prefix + "unknown flags";
    case DecodeFault::chunk_size: return prefix + "chunk of 2^" + a + " elements";
    case DecodeFault::no_values: return prefix + "neither sparse nor quantized";
    case DecodeFault::block: return prefix + "scale block of " + a + " elements";
    case DecodeFault::count: return prefix + a + " elements";
    case DecodeFault::header_size: return prefix + "header of " + a + " bytes in a message of " + b;
    case DecodeFault::header_truncated: return prefix + "header truncated";
    case DecodeFault::header_checksum: return prefix + "header checksum mismatch (corrupted header)";
    case DecodeFault::table: return table_error_message({e.table, int32_t(uint32_t(e.a)), int32_t(uint32_t(e.b))});
    case DecodeFault::tables_fill: return prefix + "code tables do not fill their section";
    case DecodeFault::chunk_span: return chunk + " spans bytes " + a + ".." + b;
    case DecodeFault::chunks_end: return prefix + "chunks end at byte " + a + ", the message at " + b;
    case DecodeFault::truncated: return prefix + "truncated: " + a + " bytes where the header says " + b;
    case DecodeFault::oversized: return prefix + "oversized: " + a + " bytes where the header says " + b;
    case DecodeFault::target_type:
      return "compressed messages decode into float32, float16 or bfloat16, not datatype " +
             std::to_string(int(uint32_t(e.a)));
    case DecodeFault::target_count: return "compressed message of " + a + " elements decoded into a buffer of " + b;
    case DecodeFault::null_target: return prefix + "null destination";
    case DecodeFault::no_chunk: return prefix + "no chunk " + std::to_string(e.chunk);
    case DecodeFault::chunk_length: return chunk + ": wrong length";
    case DecodeFault::checksum: return chunk + ": checksum mismatch (corrupted)";
    case DecodeFault::unknown_kind: return chunk + ": unknown kind " + a;
    case DecodeFault::truncated_count: return chunk + ": truncated";
    case DecodeFault::kept_count: return chunk + ": " + a + " kept elements";
    case DecodeFault::truncated_scales: return chunk + ": truncated scales";
    case DecodeFault::bad_scale: return chunk + ": a scale that is negative or too large";
    case DecodeFault::empty_value_table: return chunk + ": values but an empty value table";
    case DecodeFault::empty_code_table: return chunk + ": kept elements but an empty code table";
    case DecodeFault::truncated_stream_sizes: return chunk + ": truncated stream sizes";
    case DecodeFault::stream_past_chunk: return chunk + ": a stream runs past the chunk";
    case DecodeFault::value_stream: return chunk + ": a value stream does not decode to its length";
    case DecodeFault::index_stream: return chunk + ": an index stream does not decode to its length";
    case DecodeFault::index_past_end: return chunk + ": an index past the chunk's end";
    case DecodeFault::values_length: return chunk + ": wrong length for its values";
    case DecodeFault::kept_length: return chunk + ": wrong length for its kept elements";
    case DecodeFault::indices_order: return chunk + ": indices not increasing inside the chunk";
    case DecodeFault::nonfinite: return chunk + ": a non-finite value in a message flagged finite";
    case DecodeFault::none: break;
  }
  return prefix + "no fault";
}

// ---- Header ----

size_t MessageHeader::header_bytes(std::span<const uint8_t> prefix) {
  if (prefix.size() < wire::kFixedHeaderBytes) return 0;
  const uint8_t* p = prefix.data();
  if (wire::get_u32(p) != wire::kMagic) refuse(DecodeFault::bad_magic);
  if (p[4] != wire::kVersion) refuse(DecodeFault::version, p[4]);
  if ((p[5] & ~wire::kKnownFlags) != 0 || p[7] != 0) refuse(DecodeFault::unknown_flags);
  const MessageForm f = form_of(p);
  if (f.chunk_log2 < Spec::kMinChunkLog2 || f.chunk_log2 > Spec::kMaxChunkLog2)
    refuse(DecodeFault::chunk_size, f.chunk_log2);
  if (!f.sparse && !f.q8) refuse(DecodeFault::no_values);
  if (f.q8 ? (f.block < Spec::kMinBlock || f.block > Spec::kMaxBlock) : f.block != 0)
    refuse(DecodeFault::block, f.block);
  const uint64_t count = wire::get_u64(p + 8);
  if (count > std::numeric_limits<uint32_t>::max()) refuse(DecodeFault::count, count);
  const uint64_t fixed = wire::kFixedHeaderBytes + wire::kChunkEntryBytes * chunk_count_of(count, f.chunk_log2);
  const uint64_t h = wire::get_u32(p + 20), t = wire::get_u32(p + 24);
  if (h < fixed || h > fixed + max_tables_bytes(f) || t < h) refuse(DecodeFault::header_size, h, t);
  return size_t(h);
}

MessageHeader MessageHeader::parse(std::span<const uint8_t> bytes, Isa isa) {
  const size_t h = header_bytes(bytes);
  if (h == 0 || bytes.size() != h) refuse(DecodeFault::header_truncated);
  const uint8_t* p = bytes.data();
  const CodecKernels& k = codec_kernels(isa);
  const uint8_t zero[4] = {};
  uint32_t crc = k.crc32c(0, p, wire::kHeaderCrcOffset);
  crc = k.crc32c(crc, zero, 4);
  crc = k.crc32c(crc, p + wire::kHeaderCrcOffset + 4, h - wire::kHeaderCrcOffset - 4);
  if (crc != wire::get_u32(p + wire::kHeaderCrcOffset)) refuse(DecodeFault::header_checksum);

  MessageHeader m;
  m.form_ = form_of(p);
  m.nonfinite_ = (p[5] & wire::kNonFinite) != 0;
  m.stochastic_ = (p[5] & wire::kStochastic) != 0;
  m.count_ = wire::get_u64(p + 8);
  m.header_bytes_ = h;
  m.message_bytes_ = wire::get_u32(p + 24);
  const uint64_t chunks = chunk_count_of(m.count_, m.form_.chunk_log2);
  const size_t table_end = h - wire::kChunkEntryBytes * chunks;
  size_t pos = wire::kFixedHeaderBytes;
  if (m.form_.huffman && m.form_.q8) {
    size_t used = 0;
    m.value_table_ = HuffmanTable::read(p + pos, table_end - pos, wire::kValueAlphabet, &used);
    pos += used;
  }
  if (m.form_.huffman && m.form_.sparse) {
    size_t used = 0;
    m.gap_table_ = HuffmanTable::read(p + pos, table_end - pos, wire::kGapAlphabet, &used);
    pos += used;
  }
  if (pos != table_end) refuse(DecodeFault::tables_fill);

  size_t begin = h;
  for (uint64_t i = 0; i < chunks; ++i) {
    const uint32_t end = wire::get_u32(p + table_end + wire::kChunkEntryBytes * i);
    const uint64_t elems = std::min(m.count_ - (i << m.form_.chunk_log2), uint64_t(1) << m.form_.chunk_log2);
    if (end <= begin || end - begin > max_chunk_bytes(m.form_, elems) || end > m.message_bytes_)
      refuse_chunk(i, DecodeFault::chunk_span, begin, end);
    m.chunk_ends_.push_back(end);
    m.chunk_crcs_.push_back(wire::get_u32(p + table_end + wire::kChunkEntryBytes * i + 4));
    begin = end;
  }
  if (begin != m.message_bytes_) refuse(DecodeFault::chunks_end, begin, m.message_bytes_);
  return m;
}

MessageHeader::ChunkInfo MessageHeader::chunk(uint32_t i) const {
  const uint64_t size = uint64_t(1) << form_.chunk_log2;
  const uint64_t elem_begin = uint64_t(i) << form_.chunk_log2;
  return {i == 0 ? header_bytes_ : size_t(chunk_ends_[i - 1]), size_t(chunk_ends_[i]), elem_begin,
          uint32_t(std::min(size, count_ - elem_begin)), chunk_crcs_[i]};
}

void check_target(const MessageHeader& header, const Target& dst) {
  target_type(dst.type);
  if (dst.count != header.count()) refuse(DecodeFault::target_count, header.count(), dst.count);
  if (dst.count > 0 && dst.data == nullptr) refuse(DecodeFault::null_target);
}

// ---- Chunks ----

ChunkDecoder::ChunkDecoder(Isa isa) : kernels_(codec_kernels(isa)) {}

const uint8_t* ChunkDecoder::huffman_symbols(const MessageHeader& h, uint32_t i, std::span<const uint8_t> section,
                                             size_t count) {
  const HuffmanTable& table = h.value_table();
  if (table.kind() == HuffmanTable::Kind::empty) refuse_chunk(i, DecodeFault::empty_value_table);
  const StreamsView streams = split_streams(section, count, i);
  symbols_.resize(count);
  if (!kernels_.huffman_decode(streams, table.decode_table(), symbols_.data(), count))
    refuse_chunk(i, DecodeFault::value_stream);
  return symbols_.data();
}

void ChunkDecoder::decode_sparse_section(const MessageHeader& h, uint32_t i, std::span<const uint8_t> section, size_t m,
                                         uint32_t elems) {
  const HuffmanTable* values = h.form().q8 ? &h.value_table() : nullptr;
  const bool empty_table =
      h.gap_table().kind() == HuffmanTable::Kind::empty || (values && values->kind() == HuffmanTable::Kind::empty);
  if (m > 0 && empty_table) refuse_chunk(i, DecodeFault::empty_code_table);
  const StreamsView streams = split_streams(section, m, i);
  std::vector<uint32_t>& gaps = offsets_;
  for (unsigned s = 0; s < streams.count; ++s) {
    const uint64_t b = wire::segment_begin(m, streams.count, s), e = wire::segment_begin(m, streams.count, s + 1);
    if (!decode_sparse_stream(streams.data[s], streams.size[s], e - b, h.gap_table(), values, h.form().chunk_log2 + 1,
                              gaps.data() + b, symbols_.data() + b, values_.data() + b))
      refuse_chunk(i, DecodeFault::index_stream);
  }
  int64_t offset = -1;
  for (size_t j = 0; j < m; ++j) {
    offset += gaps[j];
    if (offset >= int64_t(elems)) refuse_chunk(i, DecodeFault::index_past_end);
    offsets_[j] = uint32_t(offset);
  }
}

void ChunkDecoder::decode_accumulate(const MessageHeader& h, uint32_t i, std::span<const uint8_t> bytes,
                                     const Target& dst, bool checksum_verified) {
  check_target(h, dst);
  if (i >= h.chunk_count()) refuse_chunk(i, DecodeFault::no_chunk);
  const MessageHeader::ChunkInfo info = h.chunk(i);
  if (bytes.size() != info.byte_end - info.byte_begin) refuse_chunk(i, DecodeFault::chunk_length);
  if (!checksum_verified && kernels_.crc32c(0, bytes.data(), bytes.size()) != info.crc)
    refuse_chunk(i, DecodeFault::checksum);
  const MessageForm& f = h.form();
  const ElemType type = target_type(dst.type);
  void* out = static_cast<uint8_t*>(dst.data) + info.elem_begin * elem_size(type);
  const uint8_t* p = bytes.data();
  const size_t size = bytes.size();
  // The chunk passed every check: write its elements (zeroed first when overwriting), timed.
  auto add = [&](auto&& accumulate) {
    const auto start = std::chrono::steady_clock::now();
    if (dst.overwrite) std::memset(out, 0, size_t(info.elems) * elem_size(type));
    accumulate();
    accumulate_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const uint8_t kind = p[0];
  size_t pos = 1;
  if (kind > uint8_t(wire::ChunkKind::sparse) || (kind == uint8_t(wire::ChunkKind::sparse) && !f.sparse))
    refuse_chunk(i, DecodeFault::unknown_kind, kind);
  const bool sparse = kind == uint8_t(wire::ChunkKind::sparse);

  size_t items = info.elems;
  if (sparse) {
    if (size < pos + 4) refuse_chunk(i, DecodeFault::truncated_count);
    items = wire::get_u32(p + pos);
    pos += 4;
    if (items * wire::kSparseDensity > info.elems) refuse_chunk(i, DecodeFault::kept_count, items);
  }
  // Scales: finite and not negative, or the values would be garbage.
  if (f.q8) {
    const size_t blocks = wire::div_ceil(items, f.block);
    if (size - pos < 4 * blocks) refuse_chunk(i, DecodeFault::truncated_scales);
    scales_.resize(blocks);
    wire::copy_bytes(scales_.data(), p + pos, 4 * blocks);
    pos += 4 * blocks;
    for (float s : scales_)
      if (!valid_scale(s)) refuse_chunk(i, DecodeFault::bad_scale);
  }
  const std::span<const uint8_t> rest = bytes.subspan(pos);
  auto check_specials = [&](const uint8_t* symbols, size_t n) {
    if (h.nonfinite()) return;
    uint32_t special = 0;
    for (size_t j = 0; j < n; ++j) special |= uint32_t(symbols[j] >= wire::kSymbolNaN);
    if (special) refuse_chunk(i, DecodeFault::nonfinite);
  };
  auto check_floats = [&](const uint8_t* raw, size_t n) {
    if (h.nonfinite()) return;
    for (size_t j = 0; j < n; ++j)
      if ((wire::get_u32(raw + 4 * j) & kAbsMask) >= kInfBits) refuse_chunk(i, DecodeFault::nonfinite);
  };

  if (!sparse) {
    if (!f.q8) {
      if (rest.size() != 4 * items) refuse_chunk(i, DecodeFault::values_length);
      check_floats(rest.data(), items);
      add([&] { kernels_.accumulate_f32(rest.data(), items, type, out); });
      return;
    }
    const uint8_t* symbols = rest.data();
    if (f.huffman) symbols = huffman_symbols(h, i, rest, items);
    else if (rest.size() != items) refuse_chunk(i, DecodeFault::values_length);
    check_specials(symbols, items);
    add([&] { kernels_.accumulate_q8(symbols, scales_.data(), f.block, items, type, out); });
    return;
  }

  const size_t m = items;
  offsets_.resize(m);
  values_.resize(m);
  symbols_.resize(m);
  if (f.huffman) {
    decode_sparse_section(h, i, rest, m, info.elems);
  } else {
    const size_t value_bytes = f.q8 ? 1 : 4;
    if (rest.size() != m * (4 + value_bytes)) refuse_chunk(i, DecodeFault::kept_length);
    int64_t prev = -1;
    for (size_t j = 0; j < m; ++j) {
      const uint32_t off = wire::get_u32(rest.data() + 4 * j);
      if (int64_t(off) <= prev || off >= info.elems) refuse_chunk(i, DecodeFault::indices_order);
      offsets_[j] = off;
      prev = off;
    }
    const uint8_t* raw = rest.data() + 4 * m;
    if (f.q8) wire::copy_bytes(symbols_.data(), raw, m);
    else wire::copy_bytes(values_.data(), raw, 4 * m);
  }
  if (f.q8) {
    check_specials(symbols_.data(), m);
    for (size_t j = 0; j < m; ++j) values_[j] = dequantize(symbols_[j], scales_[j / f.block]);
  } else {
    for (size_t j = 0; j < m; ++j)
      if (!h.nonfinite() && (float_bits_of(values_[j]) & kAbsMask) >= kInfBits) refuse_chunk(i, DecodeFault::nonfinite);
  }
  add([&] { kernels_.accumulate_sparse(offsets_.data(), values_.data(), m, type, out); });
}

// ---- Whole messages ----

void decode_accumulate(std::span<const uint8_t> message, const Target& dst, Isa isa, double* accumulate_seconds) {
  const size_t h = MessageHeader::header_bytes(message);
  if (h == 0 || message.size() < h) refuse(DecodeFault::truncated_prefix, message.size());
  const MessageHeader header = MessageHeader::parse(message.first(h), isa);
  if (message.size() != header.message_bytes())
    refuse(message.size() < header.message_bytes() ? DecodeFault::truncated : DecodeFault::oversized, message.size(),
           header.message_bytes());
  check_target(header, dst);
  const CodecKernels& k = codec_kernels(isa);
  for (uint32_t i = 0; i < header.chunk_count(); ++i) {
    const MessageHeader::ChunkInfo c = header.chunk(i);
    if (k.crc32c(0, message.data() + c.byte_begin, c.byte_end - c.byte_begin) != c.crc)
      refuse_chunk(i, DecodeFault::checksum);
  }
  ChunkDecoder decoder(isa);
  for (uint32_t i = 0; i < header.chunk_count(); ++i) {
    const MessageHeader::ChunkInfo c = header.chunk(i);
    decoder.decode_accumulate(header, i, message.subspan(c.byte_begin, c.byte_end - c.byte_begin), dst, true);
  }
  if (accumulate_seconds) *accumulate_seconds += decoder.accumulate_seconds();
}

}  // namespace dc::compression
