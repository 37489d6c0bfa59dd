// Where a dense encode's arrays lie in one workspace, and the arguments of its stages
// (dense_encode.h) for a spec, an input and a message buffer: computed on the host by whoever
// drives the stages, the CPU emulation (emulated_encoder.cpp) or the CUDA plugin. Header-only, as
// the plugin links no room's archive.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compression/gpu/dense_encode.h"

namespace dc::compression::gpu {

struct DenseEncodeLayout {
  size_t symbols, scales, histograms, stream_sizes, streams, chunk_ends, state, merge;
  size_t bytes;  // the whole workspace
};

namespace {

constexpr size_t kWorkspaceAlign = 256;

inline size_t align_up(size_t n) { return (n + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign; }

// Lays arrays out one after the other, each aligned to kWorkspaceAlign: take gives an array's
// offset, at the workspace's bytes so far.
struct WorkspaceCursor {
  size_t at = 0;
  size_t take(size_t bytes) {
    const size_t here = at;
    at += align_up(bytes);
    return here;
  }
};

// The stage arguments but for the pointers into the workspace (layout_of then places them).
inline DenseEncodeArgs dense_encode_args(const Spec& spec, ElemType type, const void* input, uint64_t count,
                                         float* residual, uint64_t seed, const CrcTables* crc, uint8_t* message) {
  DenseEncodeArgs a{};
  a.input = input;
  a.type = type;
  a.residual = residual;
  a.beta = spec.beta;
  a.rounding = spec.rounding;
  a.key = rounding_key(seed);
  a.huffman = spec.huffman;
  a.count = count;
  a.chunk_log2 = spec.chunk_log2;
  a.block = spec.block;
  a.chunks = uint32_t(wire::div_ceil(count, uint64_t(1) << spec.chunk_log2));
  a.blocks_per_chunk = uint32_t(wire::div_ceil(uint64_t(1) << spec.chunk_log2, spec.block));
  const uint64_t whole = count >> spec.chunk_log2, rest = count - (whole << spec.chunk_log2);
  a.blocks = whole * a.blocks_per_chunk + wire::div_ceil(rest, spec.block);
  // A stream holds at most a quarter of a chunk (4 streams) or 1023 items (1 stream), 11 bits each.
  const uint64_t items = (uint64_t(1) << spec.chunk_log2) / wire::kMaxStreams;
  a.stream_capacity = size_t(wire::div_ceil(wire::kMaxCodeLength * (items > 1023 ? items : 1023), 8));
  a.crc = crc;
  a.message = message;
  return a;
}

inline DenseEncodeLayout layout_of(const DenseEncodeArgs& a) {
  DenseEncodeLayout l{};
  WorkspaceCursor cursor;
  l.symbols = cursor.take(a.count);
  l.scales = cursor.take(sizeof(float) * a.blocks);
  l.histograms = cursor.take(a.huffman ? sizeof(uint32_t) * wire::kValueAlphabet * a.chunks : 0);
  l.stream_sizes = cursor.take(a.huffman ? sizeof(uint32_t) * wire::kMaxStreams * a.chunks : 0);
  l.streams = cursor.take(a.huffman ? a.stream_capacity * wire::kMaxStreams * a.chunks : 0);
  l.chunk_ends = cursor.take(sizeof(uint32_t) * a.chunks);
  l.state = cursor.take(sizeof(DenseEncodeState));
  l.merge = cursor.take(a.huffman ? sizeof(PackageMergeScratch) : 0);
  l.bytes = cursor.at;
  return l;
}

// Points the arguments' arrays into a workspace of layout.bytes (aligned to kWorkspaceAlign).
inline void place_in(DenseEncodeArgs& a, const DenseEncodeLayout& l, uint8_t* workspace) {
  a.symbols = workspace + l.symbols;
  a.scales = reinterpret_cast<float*>(workspace + l.scales);
  a.histograms = reinterpret_cast<uint32_t*>(workspace + l.histograms);
  a.stream_sizes = reinterpret_cast<uint32_t*>(workspace + l.stream_sizes);
  a.streams = workspace + l.streams;
  a.chunk_ends = reinterpret_cast<uint32_t*>(workspace + l.chunk_ends);
  a.state = reinterpret_cast<DenseEncodeState*>(workspace + l.state);
  a.merge = reinterpret_cast<PackageMergeScratch*>(workspace + l.merge);
}

}  // namespace
}  // namespace dc::compression::gpu
