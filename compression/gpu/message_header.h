// The header of a message as both GPU encoders write it (wire_format.h): the fixed fields, the code
// tables after them, then the header's CRC32C over both; and a chunk table's entries.
// DC_HOST_DEVICE.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compression/form/wire_format.h"
#include "compression/gpu/bits.h"
#include "compression/gpu/crc32c.h"
#include "kernels/host_device.h"

namespace dc::compression::gpu {

// What the fixed header says besides the magic and the version; block is 0 without q8.
struct HeaderFields {
  uint8_t flags;
  uint32_t chunk_log2;
  uint64_t count;
  uint32_t block;
  uint32_t header_bytes;
  uint32_t message_bytes;
};

namespace {

// tables: up to two stored code tables in order (value, gap), null or 0 bytes where absent; they
// fill the header up to its chunk table.
DC_HOST_DEVICE inline void write_message_header(uint8_t* msg, const HeaderFields& h, const uint8_t* first_table,
                                                size_t first_bytes, const uint8_t* second_table, size_t second_bytes,
                                                const CrcTables& crc) {
  store_u32(msg, wire::kMagic);
  msg[4] = wire::kVersion;
  msg[5] = h.flags;
  msg[6] = uint8_t(h.chunk_log2);
  msg[7] = 0;
  store_u64(msg + 8, h.count);
  store_u32(msg + 16, h.block);
  store_u32(msg + 20, h.header_bytes);
  store_u32(msg + 24, h.message_bytes);
  store_u32(msg + wire::kHeaderCrcOffset, 0);
  copy_bytes(msg + wire::kFixedHeaderBytes, first_table, first_bytes);
  copy_bytes(msg + wire::kFixedHeaderBytes + first_bytes, second_table, second_bytes);
  store_u32(msg + wire::kHeaderCrcOffset, crc32c(crc, 0, msg, h.header_bytes));
}

// Chunk c's entry in the chunk table at `table`: its end offset in the message, its CRC32C.
DC_HOST_DEVICE inline void store_chunk_entry(uint8_t* table, uint32_t c, uint32_t end, uint32_t crc) {
  store_u32(table + wire::kChunkEntryBytes * c, end);
  store_u32(table + wire::kChunkEntryBytes * c + 4, crc);
}

}  // namespace
}  // namespace dc::compression::gpu
