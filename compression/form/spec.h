// What a compressed message does to a buffer, parsed from one text grammar (docs/configuration.md,
// "Compression specs"): e.g. "topk:0.001,q8,huffman,ef:0.9", "q8,ef", "q8:stochastic", "auto".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "compression/form/wire_format.h"

namespace dc::compression {

enum class Selection : uint8_t {
  dense,         // every element is sent (q8 quantization)
  topk_exact,    // the k largest magnitudes (radix select)
  topk_sampled,  // DGC-style: threshold estimated from a sample, one pass fused with error feedback
  automatic,     // dense q8 or topk_sampled, chosen per buffer from its statistics
};

enum class Rounding : uint8_t { nearest, stochastic };

struct Spec {
  static constexpr double kDefaultAutoFraction = 0.001;
  static constexpr uint32_t kDefaultBlock = 256;
  static constexpr uint32_t kMinBlock = wire::kMinBlock, kMaxBlock = wire::kMaxBlock;
  static constexpr uint32_t kDefaultChunkLog2 = 16;  // 65536 elements: 256 KiB of float32
  static constexpr uint32_t kMinChunkLog2 = wire::kMinChunkLog2, kMaxChunkLog2 = wire::kMaxChunkLog2;

  Selection selection = Selection::dense;
  double fraction = 0.0;  // topk and auto: share of the elements kept, in (0, 1]
  bool q8 = false;        // 8-bit values with a float32 scale per block
  Rounding rounding = Rounding::nearest;
  uint32_t block = kDefaultBlock;  // elements per scale (kept elements after a selection)
  bool huffman = false;            // entropy-code the values and the sparse indices
  bool error_feedback = false;
  float beta = 1.0f;  // residual decay: residual = beta * (input + residual - sent)
  uint32_t chunk_log2 = kDefaultChunkLog2;

  bool sparse() const { return selection == Selection::topk_exact || selection == Selection::topk_sampled; }
  // The canonical text: parse_spec(s.to_string()) == s.
  std::string to_string() const;
  bool operator==(const Spec&) const = default;
};

// Throws dc::Error(dcInvalidArgument) naming the bad item and why.
Spec parse_spec(std::string_view text);

// Elements a top-k of `fraction` keeps out of `count`: ceil(fraction * count), at least 1 when
// count > 0 (computed in double, as a GPU encoder must).
uint64_t kept_target(double fraction, uint64_t count);

}  // namespace dc::compression
