// The decoder of every message (dense and sparse, q8 or float32, with or without huffman) as GPU
// kernel bodies (DC_HOST_DEVICE): compression/decoder.cpp's decode_accumulate of a whole message,
// each stage a loop over its items that any grid shape runs whole. It adds exactly the CPU
// decoder's values and refuses exactly the messages the CPU decoder refuses, recording the fault
// that one reports (decode_fault.h). The tests run the bodies on the CPU (emulated_decoder.h).
// Stages, in order:
//   parse_message     one item: every check of the header, the message's size and the target
//                     (decoder.cpp's order), the layout, the value and gap codes' decoding tables
//   check_checksums   item = a chunk: its CRC32C
//   decode_symbols    item = a quarter of a chunk (a Huffman stream's segment when it has four):
//                     kind, kept count, scales, stream sizes, its part: a dense chunk's symbols
//                     (Huffman-decoded into the workspace) or floats; a sparse chunk's kept
//                     elements, their offsets (a Huffman stream's gap sums, counted from the
//                     stream's start) and values into the workspace; the stream's exact end,
//                     the offsets' order and range, non-finite symbols and values
//   check_offsets     item = a chunk: a Huffman sparse chunk's streams' gap sums together (the
//                     prefix over its streams): its last offset inside the chunk
//   accumulate_values item = an element: a dense chunk's symbol times its block's scale, or its
//                     float, added (or written); a sparse chunk's element zeroed when writing
//   scatter_values    item = a kept element's slot (a chunk has chunk elements / 8): its offset
//                     (its stream's gap sum plus the streams' before it) and value, added
// So every chunk passed every check before any element is written, and a stage after one that
// recorded a fault does nothing: the stages may be launched back to back.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compression/element.h"
#include "compression/form/wire_format.h"
#include "compression/gpu/bits.h"
#include "compression/gpu/crc32c.h"
#include "compression/gpu/decode_fault.h"
#include "compression/gpu/flags.h"
#include "compression/gpu/huffman_code.h"
#include "compression/quantize.h"
#include "deepcomm/deepcomm.h"
#include "kernels/element_kernels.h"

namespace dc::compression::gpu {

// A decode's first fault. Threads report a key, phase << 60 | chunk << 40 | fault << 32 | detail
// (a chunk index is below 2^20), and the lowest stays: an earlier phase, then the lower chunk,
// then the check that runs first, which is the fault the CPU decoder reports.
struct DecodeReport {
  uint64_t key;
  DecodeError header;  // the whole fault when parse_message found one (its numbers need 64 bits)
};

// What parse_message read from the header, for the later stages.
struct MessageLayout {
  uint64_t count;
  uint32_t header_bytes;
  uint32_t chunk_table;  // offset of the chunk table
  uint32_t chunks;
  uint32_t chunk_log2;
  uint32_t block;
  uint8_t flags;
  CodeKind value_code;
  CodeKind gap_code;
};

// The workspace besides the symbols: about 9 KiB.
struct DecodeState {
  DecodeReport report;  // parse_message starts it afresh, so a workspace needs no clearing
  MessageLayout layout;
  CodeLengths code;                      // the table being read
  uint32_t codes[wire::kValueAlphabet];  // a code's encoding side (canonical_codes writes both; unused)
  CanonicalScratch canonical;
  uint16_t decode[kDecodeEntries];      // the value code's decoding table
  uint16_t gap_decode[kDecodeEntries];  // the gap code's decoding table
};

struct DecodeArgs {
  const uint8_t* message;
  uint64_t size;  // the message's bytes
  dcDataType_t type;
  void* data;
  uint64_t count;  // the target's elements
  bool overwrite;
  const CrcTables* crc;
  DecodeState* state;
  // count bytes, chunk c's at byte c << chunk_log2: a dense chunk's Huffman-decoded symbols, or a
  // sparse chunk's m kept elements as 2m words (8m <= its elements): the offsets, then the values
  // (sparse_words)
  uint8_t* symbols;
  // Null, or where the message's length is read when parse_message runs (size is then the most it
  // may be: a longer length is taken as size).
  const uint64_t* size_at = nullptr;
};

enum class DecodePhase : uint64_t { header = 0, checksums = 1, chunks = 2 };

constexpr uint64_t kNoFault = ~uint64_t(0);

namespace {

DC_HOST_DEVICE inline uint64_t fault_key(DecodePhase phase, uint32_t chunk, DecodeFault fault, uint32_t detail) {
  return uint64_t(phase) << 60 | uint64_t(chunk) << 40 | uint64_t(fault) << 32 | detail;
}

DC_HOST_DEVICE inline uint64_t reported_key(const DecodeState& s) {
#if defined(__CUDA_ARCH__)
  return *static_cast<const volatile uint64_t*>(&s.report.key);
#else
  return __atomic_load_n(&s.report.key, __ATOMIC_RELAXED);
#endif
}

// Whether a stage before `phase` recorded a fault (then the stage has nothing to do).
DC_HOST_DEVICE inline bool failed_before(const DecodeArgs& a, DecodePhase phase) {
  return reported_key(*a.state) < uint64_t(phase) << 60;
}

DC_HOST_DEVICE inline void report(const DecodeArgs& a, DecodePhase phase, uint32_t chunk, DecodeFault fault,
                                  uint32_t detail = 0) {
  lower_to(&a.state->report.key, fault_key(phase, chunk, fault, detail));
}

// The fault a decode reported (DecodeFault::none when the message was added).
DC_HOST_DEVICE inline DecodeError reported_error(const DecodeReport& r) {
  if (r.key == kNoFault) return {};
  if (DecodePhase(r.key >> 60) == DecodePhase::header) return r.header;
  return {DecodeFault(uint8_t(r.key >> 32)), uint32_t(r.key >> 40) & 0xfffff, uint32_t(r.key)};
}

DC_HOST_DEVICE inline uint32_t chunk_elements(const MessageLayout& m, uint32_t c) {
  const uint64_t rest = m.count - (uint64_t(c) << m.chunk_log2), whole = uint64_t(1) << m.chunk_log2;
  return uint32_t(rest < whole ? rest : whole);
}

struct ChunkBytes {
  uint64_t begin, end;
  uint32_t crc;
};

DC_HOST_DEVICE inline ChunkBytes chunk_bytes(const DecodeArgs& a, uint32_t c) {
  const MessageLayout& m = a.state->layout;
  const uint8_t* entry = a.message + m.chunk_table + wire::kChunkEntryBytes * c;
  return {c == 0 ? m.header_bytes : load_u32(entry - wire::kChunkEntryBytes), load_u32(entry), load_u32(entry + 4)};
}

// A message's bytes when its decode runs: capacity, or what *size_at says then (at most capacity).
// The CPU stream queue reads a descriptor's message_bytes_at with it too.
DC_HOST_DEVICE inline uint64_t message_bytes_now(uint64_t capacity, const uint64_t* size_at) {
  if (!size_at) return capacity;
  const uint64_t size = *size_at;
  return size < capacity ? size : capacity;
}

// MessageHeader::header_bytes and parse, then decode_accumulate's checks of the message's size and
// check_target, in their order; on success the layout and the value code's tables in s.
DC_HOST_DEVICE inline DecodeError parse_header(const DecodeArgs& a, DecodeState& s) {
  using F = DecodeFault;
  const uint8_t* p = a.message;
  const uint64_t size = message_bytes_now(a.size, a.size_at);
  if (size < wire::kFixedHeaderBytes) return {F::truncated_prefix, 0, size};
  if (load_u32(p) != wire::kMagic) return {F::bad_magic};
  if (p[4] != wire::kVersion) return {F::version, 0, p[4]};
  const uint8_t flags = p[5];
  if ((flags & ~wire::kKnownFlags) != 0 || p[7] != 0) return {F::unknown_flags};
  const uint32_t log2 = p[6];
  if (log2 < wire::kMinChunkLog2 || log2 > wire::kMaxChunkLog2) return {F::chunk_size, 0, log2};
  const bool sparse = flags & wire::kSparse, q8 = flags & wire::kQ8, huffman = flags & wire::kHuffman;
  if (!sparse && !q8) return {F::no_values};
  const uint32_t block = load_u32(p + 16);
  if (q8 ? (block < wire::kMinBlock || block > wire::kMaxBlock) : block != 0) return {F::block, 0, block};
  const uint64_t count = load_u64(p + 8);
  if (count > 0xffffffffu) return {F::count, 0, count};
  const uint64_t chunks = wire::div_ceil(count, uint64_t(1) << log2);
  const uint64_t fixed = wire::kFixedHeaderBytes + wire::kChunkEntryBytes * chunks;
  const uint64_t h = load_u32(p + 20), total = load_u32(p + 24);
  if (h < fixed || h > fixed + wire::max_tables_bytes(flags) || total < h) return {F::header_size, 0, h, total};
  if (size < h) return {F::truncated_prefix, 0, size};

  const uint8_t zero[4] = {};
  uint32_t crc = crc32c(*a.crc, 0, p, wire::kHeaderCrcOffset);
  crc = crc32c(*a.crc, crc, zero, 4);
  crc = crc32c(*a.crc, crc, p + wire::kHeaderCrcOffset + 4, h - wire::kHeaderCrcOffset - 4);
  if (crc != load_u32(p + wire::kHeaderCrcOffset)) return {F::header_checksum};

  const uint64_t table_end = h - wire::kChunkEntryBytes * chunks;
  uint64_t pos = wire::kFixedHeaderBytes;
  auto read_table = [&](unsigned alphabet) {
    size_t used = 0;
    const TableError e = read_code(p + pos, table_end - pos, alphabet, s.code, &used);
    pos += used;
    return DecodeError{e.fault == TableFault::none ? F::none : F::table, 0, uint32_t(e.detail), uint32_t(e.detail2),
                       e.fault};
  };
  CodeKind value_code = CodeKind::empty;
  if (huffman && q8) {
    const DecodeError e = read_table(wire::kValueAlphabet);
    if (e.fault != F::none) return e;
    value_code = s.code.kind;
    canonical_codes(s.code, wire::kValueAlphabet, s.codes, s.decode, s.canonical);
  }
  CodeKind gap_code = CodeKind::empty;
  if (huffman && sparse) {
    const DecodeError e = read_table(wire::kGapAlphabet);
    if (e.fault != F::none) return e;
    gap_code = s.code.kind;
    canonical_codes(s.code, wire::kGapAlphabet, s.codes, s.gap_decode, s.canonical);
  }
  if (pos != table_end) return {F::tables_fill};

  uint64_t begin = h;
  for (uint64_t i = 0; i < chunks; ++i) {
    const uint64_t end = load_u32(p + table_end + wire::kChunkEntryBytes * i);
    const uint64_t rest = count - (i << log2), elements = rest < (uint64_t(1) << log2) ? rest : uint64_t(1) << log2;
    if (end <= begin || end - begin > wire::max_chunk_bytes(flags, block, log2, elements) || end > total)
      return {F::chunk_span, uint32_t(i), begin, end};
    begin = end;
  }
  if (begin != total) return {F::chunks_end, 0, begin, total};
  if (size != total) return {size < total ? F::truncated : F::oversized, 0, size, total};

  if (a.type != dcFloat32 && a.type != dcFloat16 && a.type != dcBfloat16) return {F::target_type, 0, uint32_t(a.type)};
  if (a.count != count) return {F::target_count, 0, count, a.count};
  if (a.count > 0 && a.data == nullptr) return {F::null_target};
  s.layout = {count, uint32_t(h), uint32_t(table_end), uint32_t(chunks), log2, block, flags, value_code, gap_code};
  return {};
}

// A Huffman section of `streams` streams (decoder.cpp's split_streams): the bytes of stream s, or
// the fault of the stream sizes up to it (the last stream's thread checks them all).
DC_HOST_DEVICE inline DecodeFault find_stream(const uint8_t* section, uint64_t section_size, unsigned streams,
                                              unsigned s, BitSource* stream) {
  const uint64_t sizes = 4 * uint64_t(streams - 1);
  if (section_size < sizes) return DecodeFault::truncated_stream_sizes;
  uint64_t pos = sizes, stream_size = 0;
  for (unsigned j = 0; j <= s; ++j) {  // the last stream runs to the chunk's end
    stream_size = j + 1 < streams ? load_u32(section + 4 * j) : section_size - pos;
    if (stream_size > section_size - pos) return DecodeFault::stream_past_chunk;
    pos += stream_size;
  }
  *stream = BitSource(section + pos - stream_size, stream_size);
  return DecodeFault::none;
}

// Segment s (of kMaxStreams) of a dense chunk c: every check the CPU makes of the chunk up to this
// segment's part, then the part. Of the faults that several segments of a chunk report, the lowest
// key is the CPU's first: each segment checks the kind, the scales' room and the stream sizes up to
// its own stream, its share of the scales, its stream, raw symbols or floats.
DC_HOST_DEVICE inline void decode_segment(const DecodeArgs& a, uint32_t c, unsigned s) {
  using F = DecodeFault;
  const MessageLayout& m = a.state->layout;
  auto fault = [&](F f, uint32_t detail = 0) { report(a, DecodePhase::chunks, c, f, detail); };
  const ChunkBytes bytes = chunk_bytes(a, c);
  const uint8_t* p = a.message + bytes.begin;
  const uint64_t size = bytes.end - bytes.begin;
  const uint32_t items = chunk_elements(m, c);
  const bool finite = !(m.flags & wire::kNonFinite);
  if (!(m.flags & wire::kQ8)) {  // float32 per element (a dense chunk of a sparse message)
    if (size - 1 != 4 * uint64_t(items)) return fault(F::values_length);
    if (!finite) return;
    const uint64_t end = wire::segment_begin(items, wire::kMaxStreams, s + 1);
    for (uint64_t j = wire::segment_begin(items, wire::kMaxStreams, s); j < end; ++j)
      if ((load_u32(p + 1 + 4 * j) & kAbsMask) >= kInfBits) return fault(F::nonfinite);
    return;
  }
  const uint64_t blocks = wire::div_ceil(items, m.block);
  if (size - 1 < 4 * blocks) return fault(F::truncated_scales);
  const uint64_t last_block = wire::segment_begin(blocks, wire::kMaxStreams, s + 1);
  for (uint64_t b = wire::segment_begin(blocks, wire::kMaxStreams, s); b < last_block; ++b)
    if (!valid_scale(load_f32(p + 1 + 4 * b))) return fault(F::bad_scale);
  const uint8_t* section = p + 1 + 4 * blocks;
  const uint64_t section_size = size - 1 - 4 * blocks;

  const uint8_t* symbols = section;
  unsigned segments = wire::kMaxStreams;
  if (m.flags & wire::kHuffman) {
    segments = wire::streams_for(items);
    if (s >= segments) return;
    if (m.value_code == CodeKind::empty) return fault(F::empty_value_table);
    BitSource stream(nullptr, 0);
    const F e = find_stream(section, section_size, segments, s, &stream);
    if (e != F::none) return fault(e);
    uint8_t* out = a.symbols + (uint64_t(c) << m.chunk_log2);
    const uint64_t end = wire::segment_begin(items, segments, s + 1);
    for (uint64_t j = wire::segment_begin(items, segments, s); j < end; ++j) {
      const uint16_t entry = a.state->decode[stream.peek32() & (kDecodeEntries - 1)];
      out[j] = uint8_t(entry >> 8);
      stream.consume(entry & 0xff);
    }
    if (!stream.finished_exactly()) return fault(F::value_stream);
    symbols = out;
  } else if (section_size != items) {
    return fault(F::values_length);
  }
  if (!finite) return;
  const uint64_t end = wire::segment_begin(items, segments, s + 1);
  for (uint64_t j = wire::segment_begin(items, segments, s); j < end; ++j)
    if (symbols[j] >= wire::kSymbolNaN) return fault(F::nonfinite);
}

// Sparse chunk c's kept elements in the workspace: word j the offset of kept element j (with
// huffman the sum of its stream's gaps up to it, so that with the streams' sums before it, minus
// one, it is the offset; without, the offset plus one), word m + j its value's float32 bits.
DC_HOST_DEVICE inline uint32_t* sparse_words(const DecodeArgs& a, uint32_t c) {
  return reinterpret_cast<uint32_t*>(a.symbols + (uint64_t(c) << a.state->layout.chunk_log2));
}

// Segment s (of kMaxStreams) of a sparse chunk c: decode_accumulate's checks of the chunk up to
// this segment's part (kept count, scales, stream sizes), then the part: with huffman stream s (of
// streams_for(m)) decoded whole, its gap sums and values into the workspace; its exact end, its gap
// sum inside the chunk, its non-finite values; without, its quarter of the kept elements: offsets
// increasing (each against the one before it) and inside the chunk, values, non-finite ones.
DC_HOST_DEVICE inline void decode_sparse_segment(const DecodeArgs& a, uint32_t c, unsigned s) {
  using F = DecodeFault;
  const MessageLayout& m = a.state->layout;
  auto fault = [&](F f, uint32_t detail = 0) { report(a, DecodePhase::chunks, c, f, detail); };
  const ChunkBytes bytes = chunk_bytes(a, c);
  const uint8_t* p = a.message + bytes.begin;
  const uint64_t size = bytes.end - bytes.begin;
  const uint32_t elems = chunk_elements(m, c);
  if (size < 5) return fault(F::truncated_count);
  const uint32_t kept = load_u32(p + 1);
  if (uint64_t(kept) * wire::kSparseDensity > elems) return fault(F::kept_count, kept);
  const bool q8 = m.flags & wire::kQ8, finite = !(m.flags & wire::kNonFinite);
  const uint64_t blocks = q8 ? wire::div_ceil(kept, m.block) : 0;
  if (size - 5 < 4 * blocks) return fault(F::truncated_scales);
  const uint64_t last_block = wire::segment_begin(blocks, wire::kMaxStreams, s + 1);
  for (uint64_t b = wire::segment_begin(blocks, wire::kMaxStreams, s); b < last_block; ++b)
    if (!valid_scale(load_f32(p + 5 + 4 * b))) return fault(F::bad_scale);
  const uint8_t* section = p + 5 + 4 * blocks;
  const uint64_t section_size = size - 5 - 4 * blocks;
  uint32_t* words = sparse_words(a, c);
  bool special = false;  // a non-finite value (refused last, when the message is flagged finite)

  if (!(m.flags & wire::kHuffman)) {
    if (section_size != uint64_t(kept) * (q8 ? 5 : 8)) return fault(F::kept_length);
    const uint8_t* values = section + 4 * uint64_t(kept);
    const uint64_t end = wire::segment_begin(kept, wire::kMaxStreams, s + 1);
    for (uint64_t j = wire::segment_begin(kept, wire::kMaxStreams, s); j < end; ++j) {
      const uint32_t offset = load_u32(section + 4 * j);
      if ((j > 0 && offset <= load_u32(section + 4 * (j - 1))) || offset >= elems) return fault(F::indices_order);
      uint32_t value;
      if (q8) {
        special |= values[j] >= wire::kSymbolNaN;
        value = float_bits_of(dequantize(values[j], load_f32(p + 5 + 4 * (j / m.block))));
      } else {
        value = load_u32(values + 4 * j);
        special |= (value & kAbsMask) >= kInfBits;
      }
      words[j] = offset + 1;
      words[kept + j] = value;
    }
    if (special && finite) fault(F::nonfinite);
    return;
  }

  const unsigned streams = wire::streams_for(kept);
  if (s >= streams) return;
  if (kept > 0 && (m.gap_code == CodeKind::empty || (q8 && m.value_code == CodeKind::empty)))
    return fault(F::empty_code_table);
  BitSource stream(nullptr, 0);
  const F e = find_stream(section, section_size, streams, s, &stream);
  if (e != F::none) return fault(e);
  const unsigned max_width = m.chunk_log2 + 1;  // a gap is at most the chunk's length
  uint64_t sum = 0;                             // below 2^38: kept < 2^18 gaps of width <= 21
  const uint64_t end = wire::segment_begin(kept, streams, s + 1);
  for (uint64_t j = wire::segment_begin(kept, streams, s); j < end; ++j) {
    const uint16_t gap = a.state->gap_decode[stream.peek32() & (kDecodeEntries - 1)];
    stream.consume(gap & 0xff);
    const unsigned width = gap >> 8;
    if (width == 0 || width > max_width) return fault(F::index_stream);
    sum += (uint32_t(1) << (width - 1)) | stream.take(width - 1);
    uint32_t value;
    if (q8) {
      const uint16_t entry = a.state->decode[stream.peek32() & (kDecodeEntries - 1)];
      stream.consume(entry & 0xff);
      const uint8_t symbol = uint8_t(entry >> 8);
      special |= symbol >= wire::kSymbolNaN;
      value = float_bits_of(dequantize(symbol, load_f32(p + 5 + 4 * (j / m.block))));
    } else {
      value = stream.take(32);
      special |= (value & kAbsMask) >= kInfBits;
    }
    words[j] = uint32_t(sum);  // wraps only when the sum is past the chunk: refused below
    words[kept + j] = value;
  }
  if (!stream.finished_exactly()) return fault(F::index_stream);
  // The chunk's last offset (all its streams' gaps, minus one) is at least this stream's gaps minus one.
  if (sum > elems) return fault(F::index_past_end);
  if (special && finite) fault(F::nonfinite);
}

template <ElemType T>
DC_HOST_DEVICE inline void accumulate_into(const kernels::ThreadCoords& t, const DecodeArgs& a) {
  const MessageLayout& m = a.state->layout;
  for (size_t i = t.first(); i < m.count; i += t.stride()) {
    // In 32 bits (a chunk has at most 2^20 elements): a GPU divides those much faster.
    const uint32_t c = uint32_t(i >> m.chunk_log2), j = uint32_t(i) & ((1u << m.chunk_log2) - 1);
    const uint8_t* p = a.message + chunk_bytes(a, c).begin;
    if (a.overwrite) {  // zeroed, then added to: the CPU decoder's sums, -0 included
      if constexpr (T == ElemType::f32) static_cast<float*>(a.data)[i] = 0.0f;
      else static_cast<uint16_t*>(a.data)[i] = 0;
    }
    if (p[0] == uint8_t(wire::ChunkKind::sparse)) continue;  // scatter_values adds its kept elements
    if (!(m.flags & wire::kQ8)) {
      accumulate_elem<T>(a.data, i, load_f32(p + 1 + 4 * j));
      continue;
    }
    const uint32_t blocks = (chunk_elements(m, c) + m.block - 1) / m.block;
    const uint8_t symbol = m.flags & wire::kHuffman ? a.symbols[i] : p[1 + 4 * blocks + j];
    accumulate_elem<T>(a.data, i, dequantize(symbol, load_f32(p + 1 + 4 * (j / m.block))));
  }
}

// A kept element's slot: chunk c has 2^chunk_log2 / kSparseDensity of them (its largest kept
// count), slot j adds kept element j when the chunk is sparse and keeps more than j.
static_assert(wire::kSparseDensity == 8, "a chunk's slots are its elements >> 3");

template <ElemType T>
DC_HOST_DEVICE inline void scatter_into(const kernels::ThreadCoords& t, const DecodeArgs& a) {
  const MessageLayout& m = a.state->layout;
  const uint32_t slot_log2 = m.chunk_log2 - 3;
  const size_t slots = size_t(m.chunks) << slot_log2;
  for (size_t k = t.first(); k < slots; k += t.stride()) {
    const uint32_t c = uint32_t(k >> slot_log2), j = uint32_t(k) & ((1u << slot_log2) - 1);
    const uint8_t* p = a.message + chunk_bytes(a, c).begin;
    if (p[0] != uint8_t(wire::ChunkKind::sparse)) continue;
    const uint32_t kept = load_u32(p + 1);
    if (j >= kept) continue;
    const uint32_t* words = sparse_words(a, c);
    uint32_t offset = words[j] - 1;
    if (m.flags & wire::kHuffman) {  // the gap sums of the streams before j's
      const unsigned streams = wire::streams_for(kept);
      for (unsigned s = 1; s < streams; ++s) {
        const uint32_t begin = uint32_t(wire::segment_begin(kept, streams, s));
        if (j < begin) break;
        offset += words[begin - 1];
      }
    }
    accumulate_elem<T>(a.data, (uint64_t(c) << m.chunk_log2) + offset, float_of_bits(words[kept + j]));
  }
}

// ---- The workspace: the state, then a byte per element (256-byte aligned, as a GPU caller
// allocates it before the header is read): a dense chunk's symbols, or a sparse chunk's kept
// elements (eight bytes each, at most one in eight of its elements) ----
constexpr size_t kDecodeStateBytes = (sizeof(DecodeState) + 255) / 256 * 256;

inline size_t decode_workspace_bytes(uint64_t count) { return kDecodeStateBytes + size_t(count); }

inline void place_decode_workspace(DecodeArgs& a, uint8_t* workspace) {
  a.state = reinterpret_cast<DecodeState*>(workspace);
  a.symbols = workspace + kDecodeStateBytes;
}

// ---- The stages ----

DC_HOST_DEVICE inline void parse_message(const kernels::ThreadCoords& t, const DecodeArgs& a) {
  if (t.first() != 0) return;
  DecodeState& s = *a.state;
  s.report.key = kNoFault;
  const DecodeError e = parse_header(a, s);
  if (e.fault == DecodeFault::none) return;
  s.report.header = e;
  s.report.key = fault_key(DecodePhase::header, 0, e.fault, 0);
}

DC_HOST_DEVICE inline void check_checksums(const kernels::ThreadCoords& t, const DecodeArgs& a) {
  if (failed_before(a, DecodePhase::checksums)) return;
  for (size_t c = t.first(); c < a.state->layout.chunks; c += t.stride()) {
    const ChunkBytes bytes = chunk_bytes(a, uint32_t(c));
    if (crc32c(*a.crc, 0, a.message + bytes.begin, bytes.end - bytes.begin) != bytes.crc)
      report(a, DecodePhase::checksums, uint32_t(c), DecodeFault::checksum);
  }
}

DC_HOST_DEVICE inline void decode_symbols(const kernels::ThreadCoords& t, const DecodeArgs& a) {
  if (failed_before(a, DecodePhase::chunks)) return;
  const MessageLayout& m = a.state->layout;
  const size_t segments = size_t(m.chunks) * wire::kMaxStreams;
  for (size_t i = t.first(); i < segments; i += t.stride()) {
    const uint32_t c = uint32_t(i / wire::kMaxStreams);
    const unsigned s = unsigned(i % wire::kMaxStreams);
    const uint8_t kind = a.message[chunk_bytes(a, c).begin];
    if (kind > uint8_t(wire::ChunkKind::sparse) ||
        (kind == uint8_t(wire::ChunkKind::sparse) && !(m.flags & wire::kSparse)))
      report(a, DecodePhase::chunks, c, DecodeFault::unknown_kind, kind);
    else if (kind == uint8_t(wire::ChunkKind::sparse)) decode_sparse_segment(a, c, s);
    else decode_segment(a, c, s);
  }
}

// The prefix over a Huffman sparse chunk's streams: its last offset is the sum of all its gaps minus
// one, which must lie inside the chunk. Only a chunk whose streams all decoded (no fault of it or
// of an earlier chunk that would come first) is read.
DC_HOST_DEVICE inline void check_offsets(const kernels::ThreadCoords& t, const DecodeArgs& a) {
  if (failed_before(a, DecodePhase::chunks)) return;
  const MessageLayout& m = a.state->layout;
  if (!(m.flags & wire::kSparse) || !(m.flags & wire::kHuffman)) return;
  for (size_t c = t.first(); c < m.chunks; c += t.stride()) {
    const uint64_t key = fault_key(DecodePhase::chunks, uint32_t(c), DecodeFault::index_past_end, ~uint32_t(0));
    if (reported_key(*a.state) <= key) continue;
    const uint8_t* p = a.message + chunk_bytes(a, uint32_t(c)).begin;
    if (p[0] != uint8_t(wire::ChunkKind::sparse)) continue;
    const uint32_t kept = load_u32(p + 1);
    const uint32_t* words = sparse_words(a, uint32_t(c));
    const unsigned streams = wire::streams_for(kept);
    uint64_t gaps = 0;  // each stream's sum is at most the chunk's length (decode_sparse_segment)
    for (unsigned s = 1; s <= streams; ++s) {
      const uint64_t end = wire::segment_begin(kept, streams, s);
      if (end > 0) gaps += words[end - 1];
    }
    if (gaps > chunk_elements(m, uint32_t(c))) report(a, DecodePhase::chunks, uint32_t(c), DecodeFault::index_past_end);
  }
}

DC_HOST_DEVICE inline void accumulate_values(const kernels::ThreadCoords& t, const DecodeArgs& a) {
  if (reported_key(*a.state) != kNoFault) return;
  switch (a.type) {
    case dcFloat32: return accumulate_into<ElemType::f32>(t, a);
    case dcFloat16: return accumulate_into<ElemType::f16>(t, a);
    case dcBfloat16: return accumulate_into<ElemType::bf16>(t, a);
    default: return;  // refused by parse_message
  }
}

DC_HOST_DEVICE inline void scatter_values(const kernels::ThreadCoords& t, const DecodeArgs& a) {
  if (reported_key(*a.state) != kNoFault || !(a.state->layout.flags & wire::kSparse)) return;
  switch (a.type) {
    case dcFloat32: return scatter_into<ElemType::f32>(t, a);
    case dcFloat16: return scatter_into<ElemType::f16>(t, a);
    case dcBfloat16: return scatter_into<ElemType::bf16>(t, a);
    default: return;  // refused by parse_message
  }
}

// The stages in launch order, each with the items its grid covers for a target of `count`
// elements (sized before the message is read: a message whose header says otherwise is refused by
// parse_message, and the stages after it do nothing): calls stage.template operator()<Stage>(items).
// The CPU emulation and the CUDA plugin both launch this list.
template <class Launch>
void for_each_decode_stage(uint64_t count, Launch&& stage) {
  const uint64_t chunks = wire::div_ceil(count, uint64_t(1) << wire::kMinChunkLog2);
  stage.template operator()<parse_message>(1);
  stage.template operator()<check_checksums>(chunks);
  stage.template operator()<decode_symbols>(chunks * wire::kMaxStreams);
  stage.template operator()<check_offsets>(chunks);
  stage.template operator()<accumulate_values>(count);
  stage.template operator()<scatter_values>(count / wire::kSparseDensity + 1);
}

}  // namespace
}  // namespace dc::compression::gpu
