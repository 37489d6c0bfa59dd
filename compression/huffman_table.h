// Canonical, length-limited (11 bits) Huffman codes: built from a histogram by package-merge (an
// optimal and deterministic construction), stored as a compact list of code lengths, and turned
// into an encoding table and a one-lookup decoding table. The construction, the stored form and
// its checks are compression/gpu/huffman_code.h's, which the GPU kernels run too.
//
// Stored form (LSB-first bits, byte-padded): 2 bits kind (0 no symbol, 1 one symbol, 2 a code);
// one symbol: 8 bits symbol (it takes 0 bits per use); a code: 8 bits first and 8 bits last symbol
// with a length, then each length from first to last against the one before it (starting at 0):
// "0" same, "1 0 s" one more (s = 0) or one less (s = 1), "1 1 llll" the length itself (0 = unused).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "compression/gpu/huffman_code.h"

namespace dc::compression {

class HuffmanTable {
 public:
  enum class Kind : uint8_t { empty = 0, single = 1, coded = 2 };

  // counts[s] for s < alphabet (<= 256).
  static HuffmanTable build(const uint32_t* counts, unsigned alphabet);
  // Reads a stored table from the front of [data, data + size); *used = its bytes. Throws
  // dc::Error(dcInvalidArgument) when it is malformed or runs past size.
  static HuffmanTable read(const uint8_t* data, size_t size, unsigned alphabet, size_t* used);
  // Stores the table at out (at least max_table_bytes(alphabet) + 8 bytes); returns its bytes.
  size_t write(uint8_t* out) const;

  Kind kind() const { return Kind(code_.kind); }
  unsigned alphabet() const { return alphabet_; }
  bool has(unsigned symbol) const {
    return kind() == Kind::single ? symbol == code_.single : code_.lengths[symbol] != 0;
  }
  unsigned length(unsigned symbol) const { return code_.lengths[symbol]; }
  const gpu::CodeLengths& code() const { return code_; }
  // Per symbol: bit-reversed code | length << 16 (LSB-first streams).
  const uint32_t* codes() const { return codes_.data(); }
  // 2^11 entries (none for an empty table) indexed by the next 11 bits of a stream: the code's
  // length | its symbol << 8. The length in the low bits lets a decoder shift by the entry.
  const uint16_t* decode_table() const { return decode_.data(); }

 private:
  void finish();  // codes and decoding table from code_

  gpu::CodeLengths code_;
  unsigned alphabet_ = 0;
  std::array<uint32_t, 256> codes_{};
  std::vector<uint16_t> decode_;
};

// The message of a refused stored table (HuffmanTable::read's, and the GPU decoder's host side's).
std::string table_error_message(const gpu::TableError& error);

// Code lengths (<= max_length <= 11) minimizing the coded size of `weights` (all > 0, 2 to 256 of
// them, 2^max_length >= their number), in the order given. Ties are broken by position.
std::vector<uint8_t> package_merge(const std::vector<uint64_t>& weights, unsigned max_length);

}  // namespace dc::compression
