// The decoder of dense messages (q8, with or without huffman) as GPU kernel bodies
// (DC_HOST_DEVICE): compression/decoder.cpp's decode_accumulate of a whole message, each stage a
// loop over its items that any grid shape runs whole. It adds exactly the CPU decoder's values and
// refuses exactly the messages the CPU decoder refuses, recording the fault that one reports
// (decode_fault.h). The tests run the bodies on the CPU (emulated_decoder.h). Stages, in order:
//   parse_message     one item: every check of the header, the message's size and the target
//                     (decoder.cpp's order), the layout, the value code's decoding table
//   check_checksums   item = a chunk: its CRC32C
//   decode_symbols    item = a quarter of a chunk (a Huffman stream's segment when it has four):
//                     kind, scales, stream sizes, its symbols (Huffman-decoded into the
//                     workspace), the stream's exact end, non-finite symbols
//   accumulate_values item = an element: its symbol times its block's scale, added (or written)
// So every chunk passed every check before any element is written, and a stage after one that
// recorded a fault does nothing: the stages may be launched back to back. Messages with the
// sparse flag pass the first two stages, then decode_symbols refuses them (the CPU decodes them).
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
};

// The workspace besides the symbols: about 5 KiB.
struct DenseDecodeState {
  DecodeReport report;  // parse_message starts it afresh, so a workspace needs no clearing
  MessageLayout layout;
  CodeLengths code;                      // the table being read
  uint32_t codes[wire::kValueAlphabet];  // the value code's encoding side (canonical_codes writes both)
  CanonicalScratch canonical;
  uint16_t decode[kDecodeEntries];  // the value code's decoding table
};

struct DenseDecodeArgs {
  const uint8_t* message;
  uint64_t size;  // the message's bytes
  dcDataType_t type;
  void* data;
  uint64_t count;  // the target's elements
  bool overwrite;
  const CrcTables* crc;
  DenseDecodeState* state;
  uint8_t* symbols;  // count bytes: the Huffman-decoded symbols (unused without huffman)
};

enum class DecodePhase : uint64_t { header = 0, checksums = 1, chunks = 2 };

constexpr uint64_t kNoFault = ~uint64_t(0);

namespace {

DC_HOST_DEVICE inline uint64_t fault_key(DecodePhase phase, uint32_t chunk, DecodeFault fault, uint32_t detail) {
  return uint64_t(phase) << 60 | uint64_t(chunk) << 40 | uint64_t(fault) << 32 | detail;
}

DC_HOST_DEVICE inline uint64_t reported_key(const DenseDecodeState& s) {
#if defined(__CUDA_ARCH__)
  return *static_cast<const volatile uint64_t*>(&s.report.key);
#else
  return __atomic_load_n(&s.report.key, __ATOMIC_RELAXED);
#endif
}

// Whether a stage before `phase` recorded a fault (then the stage has nothing to do).
DC_HOST_DEVICE inline bool failed_before(const DenseDecodeArgs& a, DecodePhase phase) {
  return reported_key(*a.state) < uint64_t(phase) << 60;
}

DC_HOST_DEVICE inline void report(const DenseDecodeArgs& a, DecodePhase phase, uint32_t chunk, DecodeFault fault,
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

DC_HOST_DEVICE inline ChunkBytes chunk_bytes(const DenseDecodeArgs& a, uint32_t c) {
  const MessageLayout& m = a.state->layout;
  const uint8_t* entry = a.message + m.chunk_table + wire::kChunkEntryBytes * c;
  return {c == 0 ? m.header_bytes : load_u32(entry - wire::kChunkEntryBytes), load_u32(entry), load_u32(entry + 4)};
}

// MessageHeader::header_bytes and parse, then decode_accumulate's checks of the message's size and
// check_target, in their order; on success the layout and the value code's tables in s.
DC_HOST_DEVICE inline DecodeError parse_header(const DenseDecodeArgs& a, DenseDecodeState& s) {
  using F = DecodeFault;
  const uint8_t* p = a.message;
  if (a.size < wire::kFixedHeaderBytes) return {F::truncated_prefix, 0, a.size};
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
  if (a.size < h) return {F::truncated_prefix, 0, a.size};

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
  if (huffman && sparse) {
    const DecodeError e = read_table(wire::kGapAlphabet);
    if (e.fault != F::none) return e;
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
  if (a.size != total) return {a.size < total ? F::truncated : F::oversized, 0, a.size, total};

  if (a.type != dcFloat32 && a.type != dcFloat16 && a.type != dcBfloat16) return {F::target_type, 0, uint32_t(a.type)};
  if (a.count != count) return {F::target_count, 0, count, a.count};
  if (a.count > 0 && a.data == nullptr) return {F::null_target};
  s.layout = {count, uint32_t(h), uint32_t(table_end), uint32_t(chunks), log2, block, flags, value_code};
  return {};
}

// Segment s of chunk c (of kMaxStreams): every check the CPU makes of the chunk up to this
// segment's part, then the part. Of the faults that several segments of a chunk report, the lowest
// key is the CPU's first: each segment checks the kind, the scales' room and the stream sizes up to
// its own stream, its share of the scales, its stream or raw symbols.
DC_HOST_DEVICE inline void decode_segment(const DenseDecodeArgs& a, uint32_t c, unsigned s) {
  using F = DecodeFault;
  const MessageLayout& m = a.state->layout;
  auto fault = [&](F f, uint32_t detail = 0) { report(a, DecodePhase::chunks, c, f, detail); };
  const ChunkBytes bytes = chunk_bytes(a, c);
  const uint8_t* p = a.message + bytes.begin;
  const uint64_t size = bytes.end - bytes.begin;
  if (p[0] != uint8_t(wire::ChunkKind::dense)) return fault(F::unknown_kind, p[0]);
  const uint32_t items = chunk_elements(m, c);
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
    const uint64_t sizes = 4 * uint64_t(segments - 1);
    if (section_size < sizes) return fault(F::truncated_stream_sizes);
    uint64_t pos = sizes, stream_size = 0;
    for (unsigned j = 0; j <= s; ++j) {  // the last stream runs to the chunk's end
      stream_size = j + 1 < segments ? load_u32(section + 4 * j) : section_size - pos;
      if (stream_size > section_size - pos) return fault(F::stream_past_chunk);
      pos += stream_size;
    }
    uint8_t* out = a.symbols + (uint64_t(c) << m.chunk_log2);
    BitSource stream(section + pos - stream_size, stream_size);
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
  if (m.flags & wire::kNonFinite) return;
  const uint64_t end = wire::segment_begin(items, segments, s + 1);
  for (uint64_t j = wire::segment_begin(items, segments, s); j < end; ++j)
    if (symbols[j] >= wire::kSymbolNaN) return fault(F::nonfinite);
}

template <ElemType T>
DC_HOST_DEVICE inline void accumulate_into(const kernels::ThreadCoords& t, const DenseDecodeArgs& a) {
  const MessageLayout& m = a.state->layout;
  for (size_t i = t.first(); i < m.count; i += t.stride()) {
    // In 32 bits (a chunk has at most 2^20 elements): a GPU divides those much faster.
    const uint32_t c = uint32_t(i >> m.chunk_log2), j = uint32_t(i) & ((1u << m.chunk_log2) - 1);
    const uint8_t* p = a.message + chunk_bytes(a, c).begin;
    const uint32_t blocks = (chunk_elements(m, c) + m.block - 1) / m.block;
    const uint8_t symbol = m.flags & wire::kHuffman ? a.symbols[i] : p[1 + 4 * blocks + j];
    if (a.overwrite) {  // zeroed, then added to: the CPU decoder's sums, -0 included
      if constexpr (T == ElemType::f32) static_cast<float*>(a.data)[i] = 0.0f;
      else static_cast<uint16_t*>(a.data)[i] = 0;
    }
    accumulate_elem<T>(a.data, i, dequantize(symbol, load_f32(p + 1 + 4 * (j / m.block))));
  }
}

// ---- The workspace: the state, then a symbol per element (256-byte aligned, as a GPU caller
// allocates it before the header is read) ----
constexpr size_t kDecodeStateBytes = (sizeof(DenseDecodeState) + 255) / 256 * 256;

inline size_t dense_decode_workspace_bytes(uint64_t count) { return kDecodeStateBytes + size_t(count); }

inline void place_decode_workspace(DenseDecodeArgs& a, uint8_t* workspace) {
  a.state = reinterpret_cast<DenseDecodeState*>(workspace);
  a.symbols = workspace + kDecodeStateBytes;
}

// ---- The stages ----

DC_HOST_DEVICE inline void parse_message(const kernels::ThreadCoords& t, const DenseDecodeArgs& a) {
  if (t.first() != 0) return;
  DenseDecodeState& s = *a.state;
  s.report.key = kNoFault;
  const DecodeError e = parse_header(a, s);
  if (e.fault == DecodeFault::none) return;
  s.report.header = e;
  s.report.key = fault_key(DecodePhase::header, 0, e.fault, 0);
}

DC_HOST_DEVICE inline void check_checksums(const kernels::ThreadCoords& t, const DenseDecodeArgs& a) {
  if (failed_before(a, DecodePhase::checksums)) return;
  for (size_t c = t.first(); c < a.state->layout.chunks; c += t.stride()) {
    const ChunkBytes bytes = chunk_bytes(a, uint32_t(c));
    if (crc32c(*a.crc, 0, a.message + bytes.begin, bytes.end - bytes.begin) != bytes.crc)
      report(a, DecodePhase::checksums, uint32_t(c), DecodeFault::checksum);
  }
}

DC_HOST_DEVICE inline void decode_symbols(const kernels::ThreadCoords& t, const DenseDecodeArgs& a) {
  if (failed_before(a, DecodePhase::chunks)) return;
  if (a.state->layout.flags & wire::kSparse) {
    if (t.first() == 0) report(a, DecodePhase::chunks, 0, DecodeFault::sparse_on_device);
    return;
  }
  const size_t segments = size_t(a.state->layout.chunks) * wire::kMaxStreams;
  for (size_t i = t.first(); i < segments; i += t.stride())
    decode_segment(a, uint32_t(i / wire::kMaxStreams), unsigned(i % wire::kMaxStreams));
}

DC_HOST_DEVICE inline void accumulate_values(const kernels::ThreadCoords& t, const DenseDecodeArgs& a) {
  if (reported_key(*a.state) != kNoFault) return;
  switch (a.type) {
    case dcFloat32: return accumulate_into<ElemType::f32>(t, a);
    case dcFloat16: return accumulate_into<ElemType::f16>(t, a);
    case dcBfloat16: return accumulate_into<ElemType::bf16>(t, a);
    default: return;  // refused by parse_message
  }
}

}  // namespace
}  // namespace dc::compression::gpu
