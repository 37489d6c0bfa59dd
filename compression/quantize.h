// 8-bit quantization of one value given its block's scale, shared by the dense loops (compiled
// per instruction set) and the quantization of kept values. Only exact or correctly rounded
// float32 operations, so a GPU reproduces every symbol and residual: every function is
// DC_HOST_DEVICE, and the GPU kernels (compression/gpu) call the same text. Internal linkage.
#pragma once

#include <cstdint>

#include "compression/form/wire_format.h"
#include "kernels/host_device.h"

namespace dc::compression {
namespace {

DC_HOST_DEVICE constexpr uint32_t float_bits_of(float f) { return __builtin_bit_cast(uint32_t, f); }
DC_HOST_DEVICE constexpr float float_of_bits(uint32_t u) { return __builtin_bit_cast(float, u); }

constexpr uint32_t kAbsMask = 0x7fffffffu;
constexpr uint32_t kInfBits = 0x7f800000u;

// A block whose largest magnitude is below this is sent as zeros (error feedback keeps it): its
// inverse scale would overflow.
constexpr float kMinBlockMax = 0x1p-100f;

struct BlockScale {
  float scale;  // value of q = 1
  float inv;    // 126 / max
};

// max_bits: the largest finite magnitude's bit pattern (integer order is float order for them).
// The scale is kept one step lower when 126 * scale would overflow (m near FLT_MAX).
DC_HOST_DEVICE inline BlockScale block_scale(uint32_t max_bits) {
  const float m = float_of_bits(max_bits);
  if (!(m >= kMinBlockMax)) return {0.0f, 0.0f};
  float scale = m / float(wire::kQ8Max);
  if (float_bits_of(scale * float(wire::kQ8Max)) == kInfBits) scale = float_of_bits(float_bits_of(scale) - 1);
  return {scale, float(wire::kQ8Max) / m};
}

// A scale a decoder accepts: what block_scale can produce.
DC_HOST_DEVICE inline bool valid_scale(float scale) {
  return scale >= 0.0f && float_bits_of(scale * float(wire::kQ8Max)) < kInfBits;
}

// q for a finite t = a * inv, as an exactly integral float in [-126, 126] (comparisons and
// conversions in float vectorize better than in integers). Round to nearest even: adding and
// removing 1.5 * 2^23 (exact for |t| < 2^22).
DC_HOST_DEVICE inline float round_nearest(float t) { return (t + 0x1.8p23f) - 0x1.8p23f; }

// floor(t + u) with u uniform in [0, 1): rounds up with probability frac(t).
DC_HOST_DEVICE inline float round_stochastic(float t, float u) {
  const float f = t + u;
  const float i = float(int32_t(f));  // truncated; |f| < 128
  return i > f ? i - 1.0f : i;
}

DC_HOST_DEVICE inline float clamp_q8(float q) {
  return q < -float(wire::kQ8Max) ? -float(wire::kQ8Max) : q > float(wire::kQ8Max) ? float(wire::kQ8Max) : q;
}

DC_HOST_DEVICE inline uint32_t zigzag(int32_t q) { return (uint32_t(q) << 1) ^ uint32_t(q >> 31); }
DC_HOST_DEVICE inline int32_t unzigzag(uint32_t z) { return int32_t(z >> 1) ^ -int32_t(z & 1); }

// The symbol of a non-finite value (bits: its float32 pattern).
DC_HOST_DEVICE inline uint32_t special_symbol(uint32_t bits) {
  return (bits & kAbsMask) > kInfBits ? wire::kSymbolNaN : (bits >> 31) ? wire::kSymbolNegInf : wire::kSymbolPosInf;
}

// The float32 a symbol >= kSymbolNaN stands for.
DC_HOST_DEVICE inline float special_value(uint32_t symbol) {
  return float_of_bits(symbol == wire::kSymbolNaN      ? wire::kCanonicalNaN
                       : symbol == wire::kSymbolPosInf ? kInfBits
                                                       : (kInfBits | 0x80000000u));
}

DC_HOST_DEVICE inline float dequantize(uint32_t symbol, float scale) {
  return symbol >= wire::kSymbolNaN ? special_value(symbol) : float(unzigzag(symbol)) * scale;
}

}  // namespace
}  // namespace dc::compression
