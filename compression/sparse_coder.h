// One Huffman bit stream of sparse elements. Per element: the width w of its gap g (Huffman code
// from the gap table), the w - 1 bits of g below its leading one, then its value: a q8 code from
// the value table, or 32 raw bits of a float32. The gap of a chunk's first element counts from
// offset -1; a stream's first element's gap counts from the element before it in the chunk, so
// a decoder turns gaps into offsets with one prefix sum over the whole chunk.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compression/huffman_table.h"

namespace dc::compression {

// Values: `symbols` when value_table is given, else `floats`. Returns the bytes written, or
// SIZE_MAX when `capacity` was too small.
size_t encode_sparse_stream(const uint32_t* gaps, const uint8_t* symbols, const float* floats, size_t count,
                            const HuffmanTable& gap_table, const HuffmanTable* value_table, uint8_t* out,
                            size_t capacity);

// Decodes `count` elements into gaps and symbols (value_table given) or floats. False when a gap
// width is 0 or above max_width, or the stream does not end exactly.
bool decode_sparse_stream(const uint8_t* data, size_t size, size_t count, const HuffmanTable& gap_table,
                          const HuffmanTable* value_table, unsigned max_width, uint32_t* gaps, uint8_t* symbols,
                          float* floats);

}  // namespace dc::compression
