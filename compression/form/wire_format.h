// Byte layout of a compressed message (version 1). Little-endian throughout; docs/compression.md
// draws the same picture.
//
//   header   0  u32 magic "DCZM"          4  u8 version       5  u8 flags (Flag bits)
//            6  u8 log2(chunk elements)   7  u8 zero
//            8  u64 element count        16  u32 q8 block (elements per scale, 0 without q8)
//           20  u32 header bytes H       24  u32 message bytes T
//           28  u32 CRC32C of bytes [0, H) with this field read as zero
//           32  code tables (value table if q8+huffman, then gap table if sparse+huffman), each
//               byte-aligned; together they fill exactly the bytes up to the chunk table
//       H - 8C  chunk table: C entries of { u32 end offset of the chunk, u32 CRC32C of its bytes }
//   chunk c  [end(c-1), end(c)), chunk 0 starting at H, covering elements [c << log2, ...):
//            u8 kind, then
//            dense:  q8: f32 scale per block, then values (raw u8 or a Huffman section)
//                    no q8: f32 per element
//            sparse: u32 kept count m (8m <= elements in chunk); q8: f32 scale per block of kept
//                    values; then raw: u32 offset per kept element (increasing), then a u8 or f32
//                    value each; or a Huffman section of m elements (gap code, gap extra bits, value)
//   Huffman section of N items: S = streams_for(N) bit streams, S-1 u32 byte sizes, then the
//            streams (the last one runs to the chunk's end); stream s holds the items of segment s.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dc::compression::wire {

#if __cplusplus >= 202002L  // nvcc compiles the GPU codec as C++17, which has no std::endian
static_assert(std::endian::native == std::endian::little, "the wire format is read in place as little-endian");
#endif

constexpr uint32_t kMagic = 0x4d5a4344;  // "DCZM"
constexpr uint8_t kVersion = 1;
constexpr size_t kFixedHeaderBytes = 32;
constexpr size_t kChunkEntryBytes = 8;
constexpr size_t kHeaderCrcOffset = 28;
// The ranges of the header's chunk size (log2 of its elements) and q8 block (elements per scale).
constexpr uint32_t kMinChunkLog2 = 12, kMaxChunkLog2 = 20;
constexpr uint32_t kMinBlock = 16, kMaxBlock = 4096;

enum Flag : uint8_t {
  kSparse = 1,      // elements were selected: sparse chunks may appear
  kQ8 = 2,          // values are 8-bit symbols with per-block scales (else float32)
  kHuffman = 4,     // values and gaps are Huffman-coded
  kStochastic = 8,  // q8 rounded stochastically (informational)
  kNonFinite = 16,  // some element is NaN or infinite: the q8 specials below may appear
};
constexpr uint8_t kKnownFlags = 31;

enum class ChunkKind : uint8_t { dense = 0, sparse = 1 };

// q8 symbols: q in [-126, 126] zigzagged to 0..252; the three codes above carry non-finite values.
constexpr int kQ8Max = 126;
constexpr uint8_t kSymbolNaN = 253, kSymbolPosInf = 254, kSymbolNegInf = 255;
constexpr uint32_t kCanonicalNaN = 0x7fc00000u;

// A sparse chunk's gap g >= 1 (distance from the previous kept element, the first from offset -1)
// is coded as its bit width w (Huffman symbol) and the w-1 bits below the leading one.
constexpr unsigned kGapAlphabet = 32;
constexpr unsigned kValueAlphabet = 256;
constexpr unsigned kMaxCodeLength = 11;

// Several streams let a decoder run independent bit readers side by side.
constexpr unsigned kMaxStreams = 4;
constexpr unsigned streams_for(uint64_t items) { return items >= 1024 ? 4 : 1; }
// Stream s of S holds items [segment_begin(N, S, s), segment_begin(N, S, s + 1)).
constexpr uint64_t segment_begin(uint64_t items, unsigned streams, unsigned s) {
  return items / streams * s + (s < items % streams ? s : items % streams);
}

// A chunk is sparse only when at most one element in this many is kept; otherwise it is dense.
constexpr uint64_t kSparseDensity = 8;

constexpr uint64_t div_ceil(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Size bounds of a message's parts, for the Flag bits of its header: the encoder's capacity
// (message_form.h) and the decoder's limits, as constant expressions the GPU decoder calls too.

// Largest stored code table of `alphabet` symbols, in bytes.
constexpr uint64_t max_table_bytes(unsigned alphabet) { return (2 + 8 + 8 + 6 * uint64_t(alphabet) + 7) / 8; }
// Largest code tables of a message, in bytes.
constexpr uint64_t max_tables_bytes(uint8_t flags) {
  if (!(flags & kHuffman)) return 0;
  return (flags & kQ8 ? max_table_bytes(kValueAlphabet) : 0) + (flags & kSparse ? max_table_bytes(kGapAlphabet) : 0);
}
// A Huffman section of `items` items of at most `bits` bits each: stream sizes, the bits, and up
// to one padding byte per stream.
constexpr uint64_t huffman_section_bound(uint64_t items, uint64_t bits) {
  return 4 * uint64_t(streams_for(items) - 1) + div_ceil(items * bits, 8) + streams_for(items);
}
// Largest chunk of `elements` elements, its kind byte included (block: elements per scale).
constexpr uint64_t max_chunk_bytes(uint8_t flags, uint32_t block, uint32_t chunk_log2, uint64_t elements) {
  const bool q8 = flags & kQ8, huffman = flags & kHuffman;
  const uint64_t dense =
      q8 ? 4 * div_ceil(elements, block) + (huffman ? huffman_section_bound(elements, kMaxCodeLength) : elements)
         : 4 * elements;
  if (!(flags & kSparse)) return 1 + dense;
  const uint64_t m = elements / kSparseDensity;
  const uint64_t value_bits = q8 ? (huffman ? kMaxCodeLength : 8) : 32;
  // A kept element: gap code + the gap's bits below its leading one (a gap is at most the chunk
  // length), then its value.
  const uint64_t sparse =
      4 + (q8 ? 4 * div_ceil(m, block) : 0) +
      (huffman ? huffman_section_bound(m, kMaxCodeLength + chunk_log2 + value_bits) : m * (4 + value_bits / 8));
  return 1 + (dense > sparse ? dense : sparse);
}

inline uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t get_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline float get_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}
// memcpy, but an empty copy may name empty vectors' null data (memcpy itself may not).
inline void copy_bytes(void* dst, const void* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

inline void put_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void put_u64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline void put_f32(uint8_t* p, float v) { std::memcpy(p, &v, 4); }

}  // namespace dc::compression::wire
