// Byte access and LSB-first bit streams for the codec code that runs on both the CPU and the GPU
// (DC_HOST_DEVICE, no library calls): little-endian loads and stores that need no alignment, a
// bit writer that stores whole bytes as they fill, and a bit reader that never reads past its
// stream. They produce and accept exactly the bytes of compression/bit_io.h's writer and reader,
// which the CPU codec keeps for its faster, unaligned eight-byte accesses.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/host_device.h"

namespace dc::compression::gpu {
namespace {

DC_HOST_DEVICE inline uint32_t load_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
DC_HOST_DEVICE inline uint64_t load_u64(const uint8_t* p) { return load_u32(p) | uint64_t(load_u32(p + 4)) << 32; }
DC_HOST_DEVICE inline float load_f32(const uint8_t* p) { return __builtin_bit_cast(float, load_u32(p)); }

DC_HOST_DEVICE inline void store_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}
DC_HOST_DEVICE inline void store_u64(uint8_t* p, uint64_t v) {
  store_u32(p, uint32_t(v));
  store_u32(p + 4, uint32_t(v >> 32));
}
DC_HOST_DEVICE inline void store_f32(uint8_t* p, float v) { store_u32(p, __builtin_bit_cast(uint32_t, v)); }

DC_HOST_DEVICE inline void copy_bytes(uint8_t* dst, const uint8_t* src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = src[i];
}

class BitSink {
 public:
  DC_HOST_DEVICE BitSink(uint8_t* out, size_t capacity) : out_(out), capacity_(capacity) {}

  // Appends the low `len` (<= 32) bits of `bits`.
  DC_HOST_DEVICE void put(uint64_t bits, unsigned len) {
    acc_ |= (bits & ((uint64_t(1) << len) - 1)) << pending_;
    pending_ += len;
    while (pending_ >= 8) write_byte();
  }
  // The last byte zero-padded; the bytes written, or SIZE_MAX when the capacity was too small.
  DC_HOST_DEVICE size_t finish() {
    if (pending_ > 0) write_byte();
    return overflow_ ? SIZE_MAX : pos_;
  }

 private:
  DC_HOST_DEVICE void write_byte() {
    if (pos_ < capacity_) out_[pos_] = uint8_t(acc_);
    else overflow_ = true;
    ++pos_;
    acc_ >>= 8;
    pending_ = pending_ >= 8 ? pending_ - 8 : 0;
  }

  uint8_t* out_;
  size_t capacity_;
  size_t pos_ = 0;
  uint64_t acc_ = 0;
  unsigned pending_ = 0;
  bool overflow_ = false;
};

class BitSource {
 public:
  DC_HOST_DEVICE BitSource(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  // The next 32 bits without taking them (zeros past the end). Eight bytes at a time while they
  // lie inside the stream (Giesen's refill: bytes loaded twice OR in the same bits).
  DC_HOST_DEVICE uint32_t peek32() {
    if (count_ <= 56 && next_ + 8 <= size_) {
      bits_ |= load_u64(data_ + next_) << count_;
      next_ += (63 - count_) >> 3;
      count_ |= 56;
    }
    while (count_ <= 56) {
      const uint64_t byte = next_ < size_ ? data_[next_] : 0;
      ++next_;
      bits_ |= byte << count_;
      count_ += 8;
    }
    return uint32_t(bits_);
  }
  DC_HOST_DEVICE void consume(unsigned n) {
    bits_ >>= n;
    count_ -= n;
    used_ += n;
  }
  DC_HOST_DEVICE uint32_t take(unsigned n) {  // n <= 32
    const uint32_t v = n == 32 ? peek32() : peek32() & ((uint32_t(1) << n) - 1);
    consume(n);
    return v;
  }
  // Bits taken so far.
  DC_HOST_DEVICE uint64_t used() const { return used_; }
  // True when the bits taken were exactly the stream: none past its end, none of it left but the
  // zero padding of the last byte (as the writer leaves it).
  DC_HOST_DEVICE bool finished_exactly() const {
    if (used_ > 8 * uint64_t(size_)) return false;
    if (size_ == 0) return true;
    if (used_ <= 8 * uint64_t(size_ - 1)) return false;
    const unsigned tail = unsigned(used_ & 7);
    return tail == 0 || (data_[size_ - 1] >> tail) == 0;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t next_ = 0;  // next byte to load
  uint64_t bits_ = 0;
  unsigned count_ = 0;
  uint64_t used_ = 0;
};

}  // namespace
}  // namespace dc::compression::gpu
