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

[[noreturn]] void bad(const std::string& why) { fail(dcInvalidArgument, "compressed message: " + why); }
[[noreturn]] void bad_chunk(uint32_t i, const std::string& why) { bad("chunk " + std::to_string(i) + ": " + why); }

ElemType target_type(dcDataType_t type) {
  switch (type) {
    case dcFloat32: return ElemType::f32;
    case dcFloat16: return ElemType::f16;
    case dcBfloat16: return ElemType::bf16;
    default:
      fail(dcInvalidArgument,
           "compressed messages decode into float32, float16 or bfloat16, not datatype " + std::to_string(int(type)));
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
  if (section.size() < table) bad_chunk(chunk, "truncated stream sizes");
  size_t pos = table;
  for (unsigned s = 0; s < v.count; ++s) {
    const size_t size = s + 1 < v.count ? wire::get_u32(section.data() + 4 * s) : section.size() - pos;
    if (size > section.size() - pos) bad_chunk(chunk, "a stream runs past the chunk");
    v.data[s] = section.data() + pos;
    v.size[s] = size;
    pos += size;
  }
  return v;
}

}  // namespace

// ---- Header ----

size_t MessageHeader::header_bytes(std::span<const uint8_t> prefix) {
  if (prefix.size() < wire::kFixedHeaderBytes) return 0;
  const uint8_t* p = prefix.data();
  if (wire::get_u32(p) != wire::kMagic) bad("not a DeepComm compressed message (bad magic)");
  if (p[4] != wire::kVersion)
    bad("version " + std::to_string(p[4]) + ", this library reads version " + std::to_string(wire::kVersion));
  if ((p[5] & ~wire::kKnownFlags) != 0 || p[7] != 0) bad("unknown flags");
  const MessageForm f = form_of(p);
  if (f.chunk_log2 < Spec::kMinChunkLog2 || f.chunk_log2 > Spec::kMaxChunkLog2)
    bad("chunk of 2^" + std::to_string(f.chunk_log2) + " elements");
  if (!f.sparse && !f.q8) bad("neither sparse nor quantized");
  if (f.q8 ? (f.block < Spec::kMinBlock || f.block > Spec::kMaxBlock) : f.block != 0)
    bad("scale block of " + std::to_string(f.block) + " elements");
  const uint64_t count = wire::get_u64(p + 8);
  if (count > std::numeric_limits<uint32_t>::max()) bad(std::to_string(count) + " elements");
  const uint64_t fixed = wire::kFixedHeaderBytes + wire::kChunkEntryBytes * chunk_count_of(count, f.chunk_log2);
  const uint64_t h = wire::get_u32(p + 20), t = wire::get_u32(p + 24);
  if (h < fixed || h > fixed + max_tables_bytes(f) || t < h)
    bad("header of " + std::to_string(h) + " bytes in a message of " + std::to_string(t));
  return size_t(h);
}

MessageHeader MessageHeader::parse(std::span<const uint8_t> bytes, Isa isa) {
  const size_t h = header_bytes(bytes);
  if (h == 0 || bytes.size() != h) bad("header truncated");
  const uint8_t* p = bytes.data();
  const CodecKernels& k = codec_kernels(isa);
  const uint8_t zero[4] = {};
  uint32_t crc = k.crc32c(0, p, wire::kHeaderCrcOffset);
  crc = k.crc32c(crc, zero, 4);
  crc = k.crc32c(crc, p + wire::kHeaderCrcOffset + 4, h - wire::kHeaderCrcOffset - 4);
  if (crc != wire::get_u32(p + wire::kHeaderCrcOffset)) bad("header checksum mismatch (corrupted header)");

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
  if (pos != table_end) bad("code tables do not fill their section");

  size_t begin = h;
  for (uint64_t i = 0; i < chunks; ++i) {
    const uint32_t end = wire::get_u32(p + table_end + wire::kChunkEntryBytes * i);
    const uint64_t elems = std::min(m.count_ - (i << m.form_.chunk_log2), uint64_t(1) << m.form_.chunk_log2);
    if (end <= begin || end - begin > max_chunk_bytes(m.form_, elems) || end > m.message_bytes_)
      bad("chunk " + std::to_string(i) + " spans bytes " + std::to_string(begin) + ".." + std::to_string(end));
    m.chunk_ends_.push_back(end);
    m.chunk_crcs_.push_back(wire::get_u32(p + table_end + wire::kChunkEntryBytes * i + 4));
    begin = end;
  }
  if (begin != m.message_bytes_)
    bad("chunks end at byte " + std::to_string(begin) + ", the message at " + std::to_string(m.message_bytes_));
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
  if (dst.count != header.count())
    fail(dcInvalidArgument, "compressed message of " + std::to_string(header.count()) +
                                " elements decoded into a buffer of " + std::to_string(dst.count));
  if (dst.count > 0 && dst.data == nullptr) fail(dcInvalidArgument, "compressed message: null destination");
}

// ---- Chunks ----

ChunkDecoder::ChunkDecoder(Isa isa) : kernels_(codec_kernels(isa)) {}

const uint8_t* ChunkDecoder::huffman_symbols(const MessageHeader& h, uint32_t i, std::span<const uint8_t> section,
                                             size_t count) {
  const HuffmanTable& table = h.value_table();
  if (table.kind() == HuffmanTable::Kind::empty) bad_chunk(i, "values but an empty value table");
  const StreamsView streams = split_streams(section, count, i);
  symbols_.resize(count);
  if (!kernels_.huffman_decode(streams, table.decode_table(), symbols_.data(), count))
    bad_chunk(i, "a value stream does not decode to its length");
  return symbols_.data();
}

void ChunkDecoder::decode_sparse_section(const MessageHeader& h, uint32_t i, std::span<const uint8_t> section, size_t m,
                                         uint32_t elems) {
  const HuffmanTable* values = h.form().q8 ? &h.value_table() : nullptr;
  const bool empty_table =
      h.gap_table().kind() == HuffmanTable::Kind::empty || (values && values->kind() == HuffmanTable::Kind::empty);
  if (m > 0 && empty_table) bad_chunk(i, "kept elements but an empty code table");
  const StreamsView streams = split_streams(section, m, i);
  std::vector<uint32_t>& gaps = offsets_;
  for (unsigned s = 0; s < streams.count; ++s) {
    const uint64_t b = wire::segment_begin(m, streams.count, s), e = wire::segment_begin(m, streams.count, s + 1);
    if (!decode_sparse_stream(streams.data[s], streams.size[s], e - b, h.gap_table(), values, h.form().chunk_log2 + 1,
                              gaps.data() + b, symbols_.data() + b, values_.data() + b))
      bad_chunk(i, "an index stream does not decode to its length");
  }
  int64_t offset = -1;
  for (size_t j = 0; j < m; ++j) {
    offset += gaps[j];
    if (offset >= int64_t(elems)) bad_chunk(i, "an index past the chunk's end");
    offsets_[j] = uint32_t(offset);
  }
}

void ChunkDecoder::decode_accumulate(const MessageHeader& h, uint32_t i, std::span<const uint8_t> bytes,
                                     const Target& dst, bool checksum_verified) {
  check_target(h, dst);
  if (i >= h.chunk_count()) bad("no chunk " + std::to_string(i));
  const MessageHeader::ChunkInfo info = h.chunk(i);
  if (bytes.size() != info.byte_end - info.byte_begin) bad_chunk(i, "wrong length");
  if (!checksum_verified && kernels_.crc32c(0, bytes.data(), bytes.size()) != info.crc)
    bad_chunk(i, "checksum mismatch (corrupted)");
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
    bad_chunk(i, "unknown kind " + std::to_string(kind));
  const bool sparse = kind == uint8_t(wire::ChunkKind::sparse);

  size_t items = info.elems;
  if (sparse) {
    if (size < pos + 4) bad_chunk(i, "truncated");
    items = wire::get_u32(p + pos);
    pos += 4;
    if (items * wire::kSparseDensity > info.elems) bad_chunk(i, std::to_string(items) + " kept elements");
  }
  // Scales: finite and not negative, or the values would be garbage.
  if (f.q8) {
    const size_t blocks = wire::div_ceil(items, f.block);
    if (size - pos < 4 * blocks) bad_chunk(i, "truncated scales");
    scales_.resize(blocks);
    wire::copy_bytes(scales_.data(), p + pos, 4 * blocks);
    pos += 4 * blocks;
    for (float s : scales_)
      if (!valid_scale(s)) bad_chunk(i, "a scale that is negative or too large");
  }
  const std::span<const uint8_t> rest = bytes.subspan(pos);
  auto check_specials = [&](const uint8_t* symbols, size_t n) {
    if (h.nonfinite()) return;
    uint32_t special = 0;
    for (size_t j = 0; j < n; ++j) special |= uint32_t(symbols[j] >= wire::kSymbolNaN);
    if (special) bad_chunk(i, "a non-finite value in a message flagged finite");
  };
  auto check_floats = [&](const uint8_t* raw, size_t n) {
    if (h.nonfinite()) return;
    for (size_t j = 0; j < n; ++j)
      if ((wire::get_u32(raw + 4 * j) & kAbsMask) >= kInfBits)
        bad_chunk(i, "a non-finite value in a message flagged finite");
  };

  if (!sparse) {
    if (!f.q8) {
      if (rest.size() != 4 * items) bad_chunk(i, "wrong length for its values");
      check_floats(rest.data(), items);
      add([&] { kernels_.accumulate_f32(rest.data(), items, type, out); });
      return;
    }
    const uint8_t* symbols = rest.data();
    if (f.huffman) symbols = huffman_symbols(h, i, rest, items);
    else if (rest.size() != items) bad_chunk(i, "wrong length for its values");
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
    if (rest.size() != m * (4 + value_bytes)) bad_chunk(i, "wrong length for its kept elements");
    int64_t prev = -1;
    for (size_t j = 0; j < m; ++j) {
      const uint32_t off = wire::get_u32(rest.data() + 4 * j);
      if (int64_t(off) <= prev || off >= info.elems) bad_chunk(i, "indices not increasing inside the chunk");
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
      if (!h.nonfinite() && (float_bits_of(values_[j]) & kAbsMask) >= kInfBits)
        bad_chunk(i, "a non-finite value in a message flagged finite");
  }
  add([&] { kernels_.accumulate_sparse(offsets_.data(), values_.data(), m, type, out); });
}

// ---- Whole messages ----

void decode_accumulate(std::span<const uint8_t> message, const Target& dst, Isa isa, double* accumulate_seconds) {
  const size_t h = MessageHeader::header_bytes(message);
  if (h == 0 || message.size() < h)
    bad("truncated: " + std::to_string(message.size()) + " bytes do not hold the header");
  const MessageHeader header = MessageHeader::parse(message.first(h), isa);
  if (message.size() != header.message_bytes())
    bad(std::string(message.size() < header.message_bytes() ? "truncated" : "oversized") + ": " +
        std::to_string(message.size()) + " bytes where the header says " + std::to_string(header.message_bytes()));
  check_target(header, dst);
  const CodecKernels& k = codec_kernels(isa);
  for (uint32_t i = 0; i < header.chunk_count(); ++i) {
    const MessageHeader::ChunkInfo c = header.chunk(i);
    if (k.crc32c(0, message.data() + c.byte_begin, c.byte_end - c.byte_begin) != c.crc)
      bad_chunk(i, "checksum mismatch (corrupted)");
  }
  ChunkDecoder decoder(isa);
  for (uint32_t i = 0; i < header.chunk_count(); ++i) {
    const MessageHeader::ChunkInfo c = header.chunk(i);
    decoder.decode_accumulate(header, i, message.subspan(c.byte_begin, c.byte_end - c.byte_begin), dst, true);
  }
  if (accumulate_seconds) *accumulate_seconds += decoder.accumulate_seconds();
}

}  // namespace dc::compression
