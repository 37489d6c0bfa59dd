// The sparse encoder's coding as GPU kernel bodies (DC_HOST_DEVICE): compression/encoder.cpp's
// prepare_sparse, build_tables and write_chunk for the elements topk_select.h chose, writing
// exactly the CPU encoder's bytes and residuals. Stages, in order (after the selection's):
//   chunk_entries     item = a chunk: its entries (two binary searches)
//   quantize_entries  item = a q8 block of a chunk: kept values (sparse chunk) or positions (dense
//                     chunk, zeros where nothing is sent), their residuals; without q8 the sent
//                     elements' residuals become 0
//   count_symbols     item = a chunk: its value and gap histograms (huffman only)
//   build_tables      one item: the value code (q8) and the gap code, stored form and codes
//   encode_streams    item = a chunk's Huffman stream: dense symbols, or gap and value per entry
//   size_chunks       item = a chunk: its bytes
//   place_chunks      one item: where each chunk starts (a prefix sum), the message's size
//   write_chunks      item = a chunk: kind, kept count, scales, then offsets and values or streams,
//                     its CRC32C in the chunk table
//   write_header      one item: the fixed header, the tables, the header's CRC32C
#pragma once

#include "compression/gpu/bits.h"
#include "compression/gpu/flags.h"
#include "compression/gpu/message_header.h"
#include "compression/gpu/sparse_encode_args.h"
#include "compression/gpu/topk_select.h"

namespace dc::compression::gpu {
namespace {

DC_HOST_DEVICE inline void chunk_entries(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  const uint64_t entries = a.state->entries;
  for (uint64_t c = t.first(); c < a.chunks; c += t.stride()) {
    const uint64_t begin = chunk_begin(a, uint32_t(c)), end = begin + chunk_len(a, uint32_t(c));
    a.chunk_entries[2 * c] = uint32_t(lower_bound(a.entries, 0, entries, begin));
    a.chunk_entries[2 * c + 1] = uint32_t(lower_bound(a.entries, 0, entries, end));
  }
}

// One q8 item: its value, the element index that keys its stochastic rounding, and whether it is
// sent (a dense chunk's other positions are zeros, and keep their residuals).
struct QuantizeItem {
  float value;
  uint64_t index;
  bool sent;
};

// A block of n q8 items from item(j): their scale, symbols and the sent ones' residuals (encoder.cpp's
// quantize_kept, and quantize_dense of a dense chunk). Non-finite values get their own symbols.
template <class Item>
DC_HOST_DEVICE void quantize_items(const SparseEncodeArgs& a, uint32_t n, Item item, float* scale_out,
                                   uint8_t* symbols) {
  uint32_t max_bits = 0;
  for (uint32_t j = 0; j < n; ++j) {
    const uint32_t ab = magnitude_of(item(j).value);
    if (ab < kInfBits && ab > max_bits) max_bits = ab;
  }
  const BlockScale s = block_scale(max_bits);
  *scale_out = s.scale;
  for (uint32_t j = 0; j < n; ++j) {
    const QuantizeItem it = item(j);
    const uint32_t bits = float_bits_of(it.value);
    if ((bits & kAbsMask) >= kInfBits) {  // its residual is 0 already
      symbols[j] = uint8_t(special_symbol(bits));
      continue;
    }
    const float t = it.value * s.inv;
    const float q =
        clamp_q8(a.rounding == Rounding::nearest ? round_nearest(t) : round_stochastic(t, uniform01(a.key, it.index)));
    symbols[j] = uint8_t(zigzag(int32_t(q)));
    if (a.residual && it.sent) a.residual[it.index] = a.beta * (it.value - q * s.scale);
  }
}

DC_HOST_DEVICE inline void quantize_entries(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  if (!a.q8) {  // float32 values are sent as they are
    if (a.residual)
      for (uint64_t e = t.first(); e < a.state->entries; e += t.stride()) a.residual[a.entries[e].index] = 0.0f;
    return;
  }
  for (uint64_t item = t.first(); item < uint64_t(a.chunks) * a.blocks_per_chunk; item += t.stride()) {
    const uint32_t c = uint32_t(item / a.blocks_per_chunk);
    const ChunkItems ci = chunk_items(a, c);
    const uint32_t b0 = uint32_t(item % a.blocks_per_chunk) * a.block;
    if (b0 >= ci.items()) continue;
    const uint32_t n = ci.items() - b0 < a.block ? ci.items() - b0 : a.block;
    float* scale = a.scales + item;
    uint8_t* symbols = a.symbols + chunk_begin(a, c) + b0;
    if (ci.sparse) {
      const Entry* kept = a.entries + ci.first + b0;
      quantize_items(
          a, n,
          [&](uint32_t j) {
            return QuantizeItem{kept[j].value, kept[j].index, true};
          },
          scale, symbols);
      continue;
    }
    // A dense chunk of a sparse message: positions, zeros where nothing is sent.
    const uint64_t i0 = chunk_begin(a, c) + b0;
    const uint64_t first = lower_bound(a.entries, ci.first, ci.first + ci.kept, i0);
    const uint64_t last = lower_bound(a.entries, first, ci.first + ci.kept, i0 + n);
    const auto position = [&](uint32_t j) {
      const uint64_t e = lower_bound(a.entries, first, last, i0 + j);
      const bool sent = e < last && a.entries[e].index == i0 + j;
      return QuantizeItem{sent ? a.entries[e].value : 0.0f, i0 + j, sent};
    };
    quantize_items(a, n, position, scale, symbols);
  }
}

DC_HOST_DEVICE inline uint32_t gap_of(const SparseEncodeArgs& a, const ChunkItems& ci, uint32_t c, uint32_t e) {
  const int64_t offset = int64_t(a.entries[e].index - chunk_begin(a, c));
  const int64_t prev = e == ci.first ? -1 : int64_t(a.entries[e - 1].index - chunk_begin(a, c));
  return uint32_t(offset - prev);
}

DC_HOST_DEVICE inline void count_symbols(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  if (!a.huffman) return;
  for (uint64_t c = t.first(); c < a.chunks; c += t.stride()) {
    uint32_t* values = a.histograms + c * kHistogramWords;
    uint32_t* gaps = values + wire::kValueAlphabet;
    for (unsigned s = 0; s < kHistogramWords; ++s) values[s] = 0;
    const ChunkItems ci = chunk_items(a, uint32_t(c));
    if (a.q8) {
      const uint8_t* sym = a.symbols + chunk_begin(a, uint32_t(c));
      for (uint32_t j = 0; j < ci.items(); ++j) ++values[sym[j]];
    }
    if (ci.sparse)
      for (uint32_t e = ci.first; e < ci.first + ci.kept; ++e) ++gaps[bit_width(gap_of(a, ci, uint32_t(c), e))];
  }
}

DC_HOST_DEVICE inline void build_tables(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  if (!a.huffman || t.first() != 0) return;
  SparseEncodeState& st = *a.state;
  for (uint32_t c = 0; c < a.chunks; ++c) {
    const uint32_t* h = a.histograms + size_t(c) * kHistogramWords;
    for (unsigned s = 0; s < wire::kValueAlphabet; ++s) st.value_counts[s] += h[s];
    for (unsigned s = 0; s < wire::kGapAlphabet; ++s) st.gap_counts[s] += h[wire::kValueAlphabet + s];
  }
  if (a.q8) {
    build_code(st.value_counts, wire::kValueAlphabet, *a.merge, st.value_code);
    canonical_codes(st.value_code, wire::kValueAlphabet, st.value_codes, nullptr, st.canonical);
    st.table_bytes[0] = uint32_t(write_code(st.value_code, wire::kValueAlphabet, st.tables[0]));
  }
  build_code(st.gap_counts, wire::kGapAlphabet, *a.merge, st.gap_code);
  canonical_codes(st.gap_code, wire::kGapAlphabet, st.gap_codes, nullptr, st.canonical);
  st.table_bytes[1] = uint32_t(write_code(st.gap_code, wire::kGapAlphabet, st.tables[1]));
}

DC_HOST_DEVICE inline size_t stream_slot(const SparseEncodeArgs& a, uint32_t c, unsigned s) {
  return (size_t(c) * wire::kMaxStreams + s) * a.stream_capacity;
}

DC_HOST_DEVICE inline void put_code(BitSink& w, uint32_t code) { w.put(code & 0xffff, code >> 16); }

DC_HOST_DEVICE inline void encode_streams(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  if (!a.huffman) return;
  const SparseEncodeState& st = *a.state;
  for (uint64_t item = t.first(); item < uint64_t(a.chunks) * wire::kMaxStreams; item += t.stride()) {
    const uint32_t c = uint32_t(item / wire::kMaxStreams);
    const unsigned s = unsigned(item % wire::kMaxStreams);
    const ChunkItems ci = chunk_items(a, c);
    if (!ci.sparse && !a.q8) continue;  // float32 positions: no Huffman section
    const unsigned streams = wire::streams_for(ci.items());
    if (s >= streams) continue;
    const uint64_t b = wire::segment_begin(ci.items(), streams, s), e = wire::segment_begin(ci.items(), streams, s + 1);
    const uint8_t* sym = a.symbols + chunk_begin(a, c);
    BitSink w(a.streams + stream_slot(a, c, s), a.stream_capacity);
    for (uint64_t j = b; j < e; ++j) {
      if (ci.sparse) {
        const uint32_t g = gap_of(a, ci, c, ci.first + uint32_t(j));
        const unsigned width = bit_width(g);
        put_code(w, st.gap_codes[width]);
        w.put(g & ~(uint32_t(1) << (width - 1)), width - 1);
      }
      if (a.q8) put_code(w, st.value_codes[sym[j]]);
      else w.put(float_bits_of(a.entries[ci.first + j].value), 32);
    }
    a.stream_sizes[item] = uint32_t(w.finish());  // the slot fits the longest stream a chunk makes
  }
}

DC_HOST_DEVICE inline uint32_t huffman_section_bytes(const SparseEncodeArgs& a, uint32_t c, uint32_t items) {
  const unsigned streams = wire::streams_for(items);
  uint32_t bytes = 4 * (streams - 1);
  for (unsigned s = 0; s < streams; ++s) bytes += a.stream_sizes[size_t(c) * wire::kMaxStreams + s];
  return bytes;
}

DC_HOST_DEVICE inline void size_chunks(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  for (uint64_t item = t.first(); item < a.chunks; item += t.stride()) {
    const uint32_t c = uint32_t(item);
    const ChunkItems ci = chunk_items(a, c);
    uint32_t bytes = 1 + (ci.sparse ? 4 : 0) + (a.q8 ? 4 * uint32_t(wire::div_ceil(ci.items(), a.block)) : 0);
    if (!ci.sparse && !a.q8) bytes += 4 * ci.len;
    else if (a.huffman) bytes += huffman_section_bytes(a, c, ci.items());
    else if (ci.sparse) bytes += ci.kept * (4 + (a.q8 ? 1 : 4));
    else bytes += ci.len;
    a.chunk_ends[c] = bytes;
  }
}

DC_HOST_DEVICE inline uint32_t tables_bytes(const SparseEncodeArgs& a) {
  return a.huffman ? (a.q8 ? a.state->table_bytes[0] : 0) + a.state->table_bytes[1] : 0;
}

DC_HOST_DEVICE inline void place_chunks(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  if (t.first() != 0) return;
  const uint32_t header = uint32_t(wire::kFixedHeaderBytes + tables_bytes(a) + wire::kChunkEntryBytes * a.chunks);
  uint32_t end = header;
  for (uint32_t c = 0; c < a.chunks; ++c) a.chunk_ends[c] = end += a.chunk_ends[c];
  a.state->header_bytes = header;
  a.state->message_bytes = end;
}

// A chunk's values after its scales: raw offsets and values, a Huffman section, or positions.
DC_HOST_DEVICE inline size_t write_values(const SparseEncodeArgs& a, uint32_t c, const ChunkItems& ci, uint8_t* out) {
  const uint8_t* sym = a.symbols + chunk_begin(a, c);
  size_t pos = 0;
  if (!ci.sparse && !a.q8) {  // float32 per position, zeros where nothing is sent
    for (uint32_t j = 0; j < ci.len; ++j) store_u32(out + 4 * size_t(j), 0);
    for (uint32_t e = ci.first; e < ci.first + ci.kept; ++e)
      store_f32(out + 4 * size_t(a.entries[e].index - chunk_begin(a, c)), a.entries[e].value);
    return 4 * size_t(ci.len);
  }
  if (a.huffman) {
    const unsigned streams = wire::streams_for(ci.items());
    const uint32_t* sizes = a.stream_sizes + size_t(c) * wire::kMaxStreams;
    for (unsigned s = 0; s + 1 < streams; ++s, pos += 4) store_u32(out + pos, sizes[s]);
    for (unsigned s = 0; s < streams; ++s) {
      copy_bytes(out + pos, a.streams + stream_slot(a, c, s), sizes[s]);
      pos += sizes[s];
    }
    return pos;
  }
  if (!ci.sparse) {
    copy_bytes(out, sym, ci.len);
    return ci.len;
  }
  for (uint32_t e = ci.first; e < ci.first + ci.kept; ++e, pos += 4)
    store_u32(out + pos, uint32_t(a.entries[e].index - chunk_begin(a, c)));
  if (a.q8) {
    copy_bytes(out + pos, sym, ci.kept);
    return pos + ci.kept;
  }
  for (uint32_t e = ci.first; e < ci.first + ci.kept; ++e, pos += 4) store_f32(out + pos, a.entries[e].value);
  return pos;
}

DC_HOST_DEVICE inline void write_chunks(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  const size_t table = a.state->header_bytes - wire::kChunkEntryBytes * size_t(a.chunks);
  for (uint64_t item = t.first(); item < a.chunks; item += t.stride()) {
    const uint32_t c = uint32_t(item);
    const ChunkItems ci = chunk_items(a, c);
    const size_t begin = c == 0 ? a.state->header_bytes : a.chunk_ends[c - 1];
    uint8_t* out = a.message + begin;
    size_t pos = 0;
    out[pos++] = uint8_t(ci.sparse ? wire::ChunkKind::sparse : wire::ChunkKind::dense);
    if (ci.sparse) {
      store_u32(out + pos, ci.kept);
      pos += 4;
    }
    if (a.q8) {
      const float* scales = a.scales + size_t(c) * a.blocks_per_chunk;
      for (uint64_t b = 0; b < wire::div_ceil(ci.items(), a.block); ++b, pos += 4) store_f32(out + pos, scales[b]);
    }
    pos += write_values(a, c, ci, out + pos);
    store_chunk_entry(a.message + table, c, a.chunk_ends[c], crc32c(*a.crc, 0, out, pos));
  }
}

DC_HOST_DEVICE inline void write_header(const kernels::ThreadCoords& t, const SparseEncodeArgs& a) {
  if (t.first() != 0) return;
  const SparseEncodeState& st = *a.state;
  uint8_t flags = wire::kSparse;
  if (a.q8) flags |= wire::kQ8;
  if (a.huffman) flags |= wire::kHuffman;
  if (a.q8 && a.rounding == Rounding::stochastic) flags |= wire::kStochastic;
  if (st.nonfinite) flags |= wire::kNonFinite;
  const bool value_table = a.huffman && a.q8;
  write_message_header(a.message, {flags, a.chunk_log2, a.count, a.q8 ? a.block : 0, st.header_bytes, st.message_bytes},
                       st.tables[0], value_table ? st.table_bytes[0] : 0, st.tables[1],
                       a.huffman ? st.table_bytes[1] : 0, *a.crc);
}

// The stages of a sparse encode in launch order, each with the items its grid covers (at most:
// some stages find how many there are in the state): calls stage.template operator()<Stage>(items).
// The CPU emulation and the CUDA plugin both launch this list.
template <class Launch>
void for_each_sparse_stage(const SparseEncodeArgs& a, Launch&& stage) {
  if (a.sampled) {
    stage.template operator()<take_samples>(a.samples);
    for (unsigned pass = 0; pass < kRankPasses; ++pass) {
      stage.template operator()<rank_histogram<kRankSamples>>(a.samples);
      stage.template operator()<rank_digit<kRankSamples>>(1);
    }
  } else {
    stage.template operator()<magnitude_histogram>(a.scan_blocks);
  }
  stage.template operator()<pick_threshold>(1);
  stage.template operator()<count_admitted>(a.scan_blocks);
  stage.template operator()<place_admitted>(1);
  stage.template operator()<write_admitted>(a.scan_blocks);
  for (unsigned pass = 0; pass < kRankPasses; ++pass) {
    stage.template operator()<rank_histogram<kRankAdmitted>>(a.count);
    stage.template operator()<rank_digit<kRankAdmitted>>(1);
  }
  stage.template operator()<count_kept>(a.scan_blocks);
  stage.template operator()<place_kept>(1);
  stage.template operator()<write_entries>(a.scan_blocks + a.count);
  stage.template operator()<chunk_entries>(a.chunks);
  stage.template operator()<quantize_entries>(a.q8 ? uint64_t(a.chunks) * a.blocks_per_chunk : a.count);
  if (a.huffman) {
    stage.template operator()<count_symbols>(a.chunks);
    stage.template operator()<build_tables>(1);
    stage.template operator()<encode_streams>(uint64_t(a.chunks) * wire::kMaxStreams);
  }
  stage.template operator()<size_chunks>(a.chunks);
  stage.template operator()<place_chunks>(1);
  stage.template operator()<write_chunks>(a.chunks);
  stage.template operator()<write_header>(1);
}

}  // namespace
}  // namespace dc::compression::gpu
