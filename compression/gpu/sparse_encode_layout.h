// Where a sparse encode's arrays lie in one workspace, and the arguments of its stages
// (topk_select.h, sparse_encode.h) for a spec, an input and a message buffer: computed on the host
// by whoever drives the stages, the CPU emulation or the CUDA plugin. Header-only, as the plugin
// links no room's archive. The workspace holds the worst case, every element admitted: about
// 17 bytes per element.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compression/gpu/dense_encode_layout.h"
#include "compression/gpu/sparse_encode_args.h"
#include "compression/sample_plan.h"

namespace dc::compression::gpu {

struct SparseEncodeLayout {
  size_t sample_bits, scan_counts, admitted, keep_counts, entries, chunk_entries, symbols, scales, histograms,
      stream_sizes, streams, chunk_ends, state, merge;
  size_t bytes;  // the whole workspace
};

namespace {

// The stage arguments but for the pointers into the workspace (layout_of then places them).
// k: the elements a top-k keeps (kept_target of the spec's fraction).
inline SparseEncodeArgs sparse_encode_args(const Spec& spec, uint64_t k, ElemType type, const void* input,
                                           uint64_t count, float* residual, uint64_t seed, const CrcTables* crc,
                                           uint8_t* message) {
  SparseEncodeArgs a{};
  a.input = input;
  a.type = type;
  a.residual = residual;
  a.beta = spec.beta;
  a.sampled = spec.selection == Selection::topk_sampled;
  a.q8 = spec.q8;
  a.rounding = spec.rounding;
  a.key = rounding_key(seed);
  a.huffman = spec.huffman;
  a.count = count;
  a.k = k;
  if (a.sampled && count > 0) {
    const SamplePlan plan = sample_plan(count, k);
    a.samples = plan.samples;
    a.sample_rank = plan.rank;
  }
  a.chunk_log2 = spec.chunk_log2;
  a.block = spec.block;
  a.chunks = uint32_t(wire::div_ceil(count, uint64_t(1) << spec.chunk_log2));
  a.blocks_per_chunk = uint32_t(wire::div_ceil(uint64_t(1) << spec.chunk_log2, spec.block));
  a.scan_blocks = wire::div_ceil(count, kScanElements);
  // A stream's slot holds the longest stream of a chunk: a quarter of it (4 streams) or 1023
  // items (1 stream); dense items of 11 bits, sparse ones (at most 1 in 8) of a gap code, the
  // gap's bits below its leading one and a value.
  const uint64_t whole = uint64_t(1) << spec.chunk_log2;
  const uint64_t dense_items = whole / wire::kMaxStreams, sparse_items = wire::div_ceil(whole / 8, wire::kMaxStreams);
  const uint64_t dense =
      spec.q8 ? wire::div_ceil(wire::kMaxCodeLength * (dense_items > 1023 ? dense_items : 1023), 8) : 0;
  const uint64_t sparse_bits = wire::kMaxCodeLength + spec.chunk_log2 + (spec.q8 ? wire::kMaxCodeLength : 32);
  const uint64_t sparse = wire::div_ceil(sparse_bits * (sparse_items > 1023 ? sparse_items : 1023), 8);
  a.stream_capacity = size_t(dense > sparse ? dense : sparse);
  a.crc = crc;
  a.message = message;
  return a;
}

inline SparseEncodeLayout layout_of(const SparseEncodeArgs& a) {
  SparseEncodeLayout l{};
  WorkspaceCursor cursor;
  l.sample_bits = cursor.take(sizeof(uint32_t) * a.samples);
  l.scan_counts = cursor.take(sizeof(uint32_t) * 2 * a.scan_blocks);
  l.admitted = cursor.take(sizeof(Entry) * a.count);
  l.keep_counts = cursor.take(sizeof(uint32_t) * 3 * a.scan_blocks);
  l.entries = cursor.take(sizeof(Entry) * a.count);
  l.chunk_entries = cursor.take(sizeof(uint32_t) * 2 * a.chunks);
  l.symbols = cursor.take(a.q8 ? a.count : 0);
  l.scales = cursor.take(a.q8 ? sizeof(float) * a.chunks * a.blocks_per_chunk : 0);
  l.histograms = cursor.take(a.huffman ? sizeof(uint32_t) * kHistogramWords * a.chunks : 0);
  l.stream_sizes = cursor.take(a.huffman ? sizeof(uint32_t) * wire::kMaxStreams * a.chunks : 0);
  l.streams = cursor.take(a.huffman ? a.stream_capacity * wire::kMaxStreams * a.chunks : 0);
  l.chunk_ends = cursor.take(sizeof(uint32_t) * a.chunks);
  l.state = cursor.take(sizeof(SparseEncodeState));
  l.merge = cursor.take(a.huffman ? sizeof(PackageMergeScratch) : 0);
  l.bytes = cursor.at;
  return l;
}

// Points the arguments' arrays into a workspace of layout.bytes (aligned to kWorkspaceAlign).
inline void place_in(SparseEncodeArgs& a, const SparseEncodeLayout& l, uint8_t* workspace) {
  a.sample_bits = reinterpret_cast<uint32_t*>(workspace + l.sample_bits);
  a.scan_counts = reinterpret_cast<uint32_t*>(workspace + l.scan_counts);
  a.admitted = reinterpret_cast<Entry*>(workspace + l.admitted);
  a.keep_counts = reinterpret_cast<uint32_t*>(workspace + l.keep_counts);
  a.entries = reinterpret_cast<Entry*>(workspace + l.entries);
  a.chunk_entries = reinterpret_cast<uint32_t*>(workspace + l.chunk_entries);
  a.symbols = workspace + l.symbols;
  a.scales = reinterpret_cast<float*>(workspace + l.scales);
  a.histograms = reinterpret_cast<uint32_t*>(workspace + l.histograms);
  a.stream_sizes = reinterpret_cast<uint32_t*>(workspace + l.stream_sizes);
  a.streams = workspace + l.streams;
  a.chunk_ends = reinterpret_cast<uint32_t*>(workspace + l.chunk_ends);
  a.state = reinterpret_cast<SparseEncodeState*>(workspace + l.state);
  a.merge = reinterpret_cast<PackageMergeScratch*>(workspace + l.merge);
}

}  // namespace
}  // namespace dc::compression::gpu
