// Why a compressed message is refused, as plain data: what the CPU decoder (decoder.cpp) throws
// and the GPU decoder's stages (decode.h) record, so that decoder.h's decode_error_message
// gives both the same words.
#pragma once

#include <cstdint>

#include "compression/gpu/huffman_code.h"

namespace dc::compression::gpu {

// The comments say which numbers a fault's message names: DecodeError's a, b and chunk.
enum class DecodeFault : uint8_t {
  none,
  // The message as a whole, in the order the decoder checks it.
  truncated_prefix,  // a: the message's bytes, too few for the fixed header or for the header
  bad_magic,
  version,  // a: the version
  unknown_flags,
  chunk_size,        // a: log2 of a chunk's elements
  no_values,         // neither sparse nor q8
  block,             // a: elements per scale
  count,             // a: elements
  header_size,       // a: the header's bytes, b: the message's
  header_truncated,  // MessageHeader::parse given other than the header's bytes
  header_checksum,
  table,  // table: why; a, b: the TableError's details
  tables_fill,
  chunk_span,    // chunk; a, b: its first and end byte
  chunks_end,    // a: the last chunk's end, b: the message's bytes
  truncated,     // a: the message's bytes, b: the header's count of them
  oversized,     // a, b: as truncated
  target_type,   // a: the datatype
  target_count,  // a: the message's elements, b: the target's
  null_target,
  no_chunk,      // chunk: past the last (ChunkDecoder)
  chunk_length,  // chunk: given other than its bytes (ChunkDecoder)
  checksum,      // chunk
  // A chunk's content (chunk), in the order the checks run, so that of the faults several threads
  // find in one chunk the lowest is the one the CPU decoder reports.
  unknown_kind,     // a: the kind byte
  truncated_count,  // a sparse chunk too short for its kept count
  kept_count,       // a: the kept count
  truncated_scales,
  bad_scale,
  empty_value_table,
  empty_code_table,
  truncated_stream_sizes,
  stream_past_chunk,
  value_stream,
  index_stream,
  index_past_end,
  values_length,
  kept_length,
  indices_order,
  nonfinite,
};

struct DecodeError {
  DecodeFault fault = DecodeFault::none;
  uint32_t chunk = 0;
  uint64_t a = 0, b = 0;
  TableFault table = TableFault::none;
};

namespace {

// A DecodeError as three words, as a device decode hands it back (device/plugin_abi.h):
// { fault | table << 8 | chunk << 32, a, b }; all zeros when there was none.
DC_HOST_DEVICE inline void pack_decode_error(const DecodeError& e, uint64_t* words) {
  words[0] = uint64_t(e.fault) | uint64_t(e.table) << 8 | uint64_t(e.chunk) << 32;
  words[1] = e.a;
  words[2] = e.b;
}

DC_HOST_DEVICE inline DecodeError unpack_decode_error(const uint64_t* words) {
  return {DecodeFault(uint8_t(words[0])), uint32_t(words[0] >> 32), words[1], words[2],
          TableFault(uint8_t(words[0] >> 8))};
}

}  // namespace

}  // namespace dc::compression::gpu
