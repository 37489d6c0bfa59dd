#include "compression/sparse_coder.h"

#include <bit>

#include "compression/bit_io.h"
#include "compression/form/wire_format.h"

namespace dc::compression {

size_t encode_sparse_stream(const uint32_t* gaps, const uint8_t* symbols, const float* floats, size_t count,
                            const HuffmanTable& gap_table, const HuffmanTable* value_table, uint8_t* out,
                            size_t capacity) {
  BitWriter w(out, capacity);
  const uint32_t* gap_codes = gap_table.codes();
  for (size_t j = 0; j < count; ++j) {
    const uint32_t g = gaps[j];
    const unsigned width = unsigned(std::bit_width(g));
    const uint32_t c = gap_codes[width];
    w.put(c & 0xffff, c >> 16);
    w.put(g & ~(uint32_t(1) << (width - 1)), width - 1);
    w.flush();
    if (value_table) {
      const uint32_t v = value_table->codes()[symbols[j]];
      w.put(v & 0xffff, v >> 16);
    } else {
      w.put(std::bit_cast<uint32_t>(floats[j]), 32);
    }
    w.flush();
  }
  return w.finish();
}

bool decode_sparse_stream(const uint8_t* data, size_t size, size_t count, const HuffmanTable& gap_table,
                          const HuffmanTable* value_table, unsigned max_width, uint32_t* gaps, uint8_t* symbols,
                          float* floats) {
  BitReader r(data, size);
  constexpr uint64_t kMask = (uint64_t(1) << wire::kMaxCodeLength) - 1;
  const uint16_t* gt = gap_table.decode_table();
  const uint16_t* vt = value_table ? value_table->decode_table() : nullptr;
  for (size_t j = 0; j < count; ++j) {
    r.refill();  // 56 bits: gap code (11) + extra (<= 20) + q8 code (11)
    const uint16_t e = gt[r.peek() & kMask];
    r.consume(e & 0xff);
    const unsigned width = e >> 8;
    if (width == 0 || width > max_width) return false;
    gaps[j] = (uint32_t(1) << (width - 1)) | uint32_t(r.take(width - 1));
    if (vt) {
      const uint16_t v = vt[r.peek() & kMask];
      r.consume(v & 0xff);
      symbols[j] = uint8_t(v >> 8);
    } else {
      r.refill();
      floats[j] = std::bit_cast<float>(uint32_t(r.take(32)));
    }
  }
  return r.finished_exactly();
}

}  // namespace dc::compression
