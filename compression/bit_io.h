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
  // Continues a stream with `pending` (< 8) bits in acc after `pos` bytes.
  BitWriter(uint8_t* out, size_t capacity, size_t pos, uint64_t acc, unsigned pending)
      : out_(out), capacity_(capacity), pos_(pos), acc_(acc), pending_(pending) {}

  // Appends the low `len` bits of `bits`. Between flushes at most 56 bits may be added.
  void put(uint64_t bits, unsigned len) {
    acc_ |= bits << pending_;
    pending_ += len;
  }

  // Writes out the whole bytes; fewer than 8 bits stay pending.
  void flush() {
    if (pos_ + 8 <= capacity_) {
      std::memcpy(out_ + pos_, &acc_, 8);
      pos_ += pending_ >> 3;
      acc_ >>= pending_ & ~7u;  // pending_ < 64: at most 56 bits were added to fewer than 8
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

// The part of a reader that a check-free decoding loop needs (fewer registers than a BitReader).
struct FastLane {
  const uint8_t* p;
  uint64_t bits;
  uint32_t count;

  void refill() {
    bits |= load_le64(p) << count;
    p += (63 - count) >> 3;
    count |= 56;
  }
  // One symbol through a table of length | symbol << 8 entries, read as bytes (little-endian):
  // the length and the symbol are two loads, neither needs extracting.
  uint8_t decode(const uint8_t* table) {
    const uint64_t i = bits & 0x7ff;
    const unsigned length = table[2 * i];
    bits >>= length;
    count -= length;
    return table[2 * i + 1];
  }
};

class BitReader {
 public:
  BitReader() = default;
  BitReader(const uint8_t* data, size_t size) : p_(data), begin_(data), end_(data + size) {}

  // Afterwards at least 56 bits are available.
  void refill() {
    if (end_ - p_ >= 8) {
      refill_fast();
      return;
    }
    while (count_ < 56) {
      uint64_t byte = 0;
      if (p_ < end_) byte = *p_++;
      else ++overrun_;
      bits_ |= byte << count_;
      count_ += 8;
    }
  }
  // A refill reading eight bytes in place, valid fast_refills() times in a row (each advances by
  // at most 7 bytes).
  void refill_fast() {
    bits_ |= load_le64(p_) << count_;
    p_ += (63 - count_) >> 3;
    count_ |= 56;
  }
  FastLane lane() const { return {p_, bits_, count_}; }
  void set_lane(const FastLane& l) {
    p_ = l.p;
    bits_ = l.bits;
    count_ = l.count;
  }
  size_t fast_refills() const { return end_ - p_ >= 8 ? size_t(end_ - p_ - 8) / 7 + 1 : 0; }

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
    const size_t size = size_t(end_ - begin_);
    const uint64_t used = 8 * uint64_t(p_ - begin_ + overrun_) - count_;
    if (used > 8 * uint64_t(size)) return false;
    if (size == 0) return true;
    if (used <= 8 * uint64_t(size - 1)) return false;
    const unsigned tail = unsigned(used & 7);
    return tail == 0 || (end_[-1] >> tail) == 0;
  }

 private:
  const uint8_t* p_ = nullptr;  // next byte to load
  const uint8_t* begin_ = nullptr;
  const uint8_t* end_ = nullptr;
  size_t overrun_ = 0;  // zero bytes loaded past the end
  uint64_t bits_ = 0;
  unsigned count_ = 0;
};

}  // namespace
}  // namespace dc::compression
