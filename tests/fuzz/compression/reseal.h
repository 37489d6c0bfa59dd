// Recomputes the checksums of a (possibly mangled) message in place, wherever its header and
// chunk table say they are, so that fuzzers and tests reach the checks behind the checksums.
// Tolerates any bytes: it only ever touches [0, size).
#pragma once

#include <cstdint>
#include <span>

#include "compression/codec_isa.h"
#include "compression/form/wire_format.h"

namespace dc::compression::fuzz {

inline void reseal(std::span<uint8_t> msg) {
  namespace w = wire;
  if (msg.size() < w::kFixedHeaderBytes) return;
  uint8_t* p = msg.data();
  const uint32_t log2 = p[6];
  const uint64_t count = w::get_u64(p + 8);
  const uint64_t h = w::get_u32(p + 20);
  if (log2 < 12 || log2 > 20 || h > msg.size() || h < w::kFixedHeaderBytes) return;
  const uint64_t chunks = (count >> log2) + ((count & ((uint64_t(1) << log2) - 1)) != 0);
  const CodecKernels& k = codec_kernels();
  if (chunks <= (h - w::kFixedHeaderBytes) / w::kChunkEntryBytes) {
    const uint64_t table = h - w::kChunkEntryBytes * chunks;
    uint64_t begin = h;
    for (uint64_t i = 0; i < chunks; ++i) {
      uint8_t* entry = p + table + w::kChunkEntryBytes * i;
      const uint64_t end = w::get_u32(entry);
      if (end < begin || end > msg.size()) break;
      w::put_u32(entry + 4, k.crc32c(0, p + begin, end - begin));
      begin = end;
    }
  }
  w::put_u32(p + w::kHeaderCrcOffset, 0);
  w::put_u32(p + w::kHeaderCrcOffset, k.crc32c(0, p, h));
}

}  // namespace dc::compression::fuzz
