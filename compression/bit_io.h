// LSB-first bit streams: a writer that stores eight bytes at a time, and a reader with Giesen's
// branch-free refill (https://fgiesen.wordpress.com/2018/02/20/reading-bits-in-far-too-many-ways-part-2/)
// that never reads past its stream: within the last eight bytes it reads byte by byte and
// continues with zero bytes, which finished_exactly() then rejects. Internal linkage (per-ISA
// translation units).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dc::compression {
namespace {

inline uint64_t load_le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

class BitWriter {
 public:
  BitWriter(uint8_t* out, size_t capacity) : out_(out), capacity_(capacity) {}

  // Appends the low `len` bits of `bits`. Between flushes at most 56 bits may be added.
  void put(uint64_t bits, unsigned len) {
    acc_ |= bits << pending_;
    pending_ += len;
  }

  // Writes out the whole bytes; fewer than 8 bits stay pending.
  void flush() {
    if (pos_ + 8 <= capacity_) {
      std::memcpy(out_ + pos_, &acc_, 8);
      const unsigned bytes = pending_ >> 3;
      pos_ += bytes;
      acc_ = bytes == 8 ? 0 : acc_ >> (8 * bytes);
      pending_ &= 7;
      return;
    }
    while (pending_ >= 8) write_byte();
  }

  // Flushes everything (the last byte zero-padded); returns the bytes written, or SIZE_MAX when
  // the capacity was too small.
  size_t finish() {
    flush();
    if (pending_ > 0) write_byte();
    return overflow_ ? SIZE_MAX : pos_;
  }

 private:
  void write_byte() {
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

class BitReader {
 public:
  BitReader() = default;
  BitReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  // Afterwards at least 56 bits are available.
  void refill() {
    if (pos_ + 8 <= size_) {
      bits_ |= load_le64(data_ + pos_) << count_;
      pos_ += (63 - count_) >> 3;
      count_ |= 56;
      return;
    }
    while (count_ < 56) {
      bits_ |= uint64_t(pos_ < size_ ? data_[pos_] : 0) << count_;
      ++pos_;
      count_ += 8;
    }
  }
  bool can_refill_fast() const { return pos_ + 8 <= size_; }

  uint64_t peek() const { return bits_; }
  void consume(unsigned n) {
    bits_ >>= n;
    count_ -= n;
  }
  uint64_t take(unsigned n) {
    const uint64_t v = bits_ & ((uint64_t(1) << n) - 1);
    consume(n);
    return v;
  }

  // True when the bits read were exactly the stream: no read past its end, no byte left unread,
  // and the padding bits of the last byte are zero (as the writer leaves them).
  bool finished_exactly() const {
    const uint64_t used = 8 * uint64_t(pos_) - count_;
    if (used > 8 * uint64_t(size_)) return false;
    if (size_ == 0) return true;
    if (used <= 8 * uint64_t(size_ - 1)) return false;
    const unsigned tail = unsigned(used & 7);
    return tail == 0 || (data_[size_ - 1] >> tail) == 0;
  }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t pos_ = 0;  // next byte to load; may pass size_ (zero bytes past the end)
  uint64_t bits_ = 0;
  unsigned count_ = 0;
};

}  // namespace
}  // namespace dc::compression
