// CRC32C (Castagnoli) by slicing over eight 256-entry tables, for code that runs on the CPU and the
// GPU: the tables are a constant expression, placed where the caller's side reads them (static
// memory on the CPU, a __device__ copy in the CUDA plugin) and passed in. The same checksum as
// the CPU codec's loops (codec_loops.inc), which use the SSE4.2 instruction where they can.
#pragma once

#include <cstddef>
#include <cstdint>

#include "compression/gpu/bits.h"
#include "kernels/host_device.h"

namespace dc::compression::gpu {

struct CrcTables {
  uint32_t t[8][256];
};

constexpr CrcTables make_crc_tables() {
  CrcTables tables{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
    tables.t[0][i] = c;
  }
  for (int s = 1; s < 8; ++s)
    for (uint32_t i = 0; i < 256; ++i)
      tables.t[s][i] = (tables.t[s - 1][i] >> 8) ^ tables.t[0][tables.t[s - 1][i] & 0xff];
  return tables;
}

namespace {

DC_HOST_DEVICE inline uint32_t crc32c(const CrcTables& k, uint32_t crc, const uint8_t* p, size_t n) {
  uint32_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    const uint64_t w = load_u64(p) ^ c;
    c = k.t[7][w & 0xff] ^ k.t[6][(w >> 8) & 0xff] ^ k.t[5][(w >> 16) & 0xff] ^ k.t[4][(w >> 24) & 0xff] ^
        k.t[3][(w >> 32) & 0xff] ^ k.t[2][(w >> 40) & 0xff] ^ k.t[1][(w >> 48) & 0xff] ^ k.t[0][w >> 56];
  }
  for (; n > 0; --n, ++p) c = (c >> 8) ^ k.t[0][(c ^ *p) & 0xff];
  return ~c;
}

}  // namespace
}  // namespace dc::compression::gpu
