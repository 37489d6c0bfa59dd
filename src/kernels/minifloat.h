// Branch-light scalar conversions between float32 and the narrow float formats (IEEE half,
// bfloat16, OCP fp8 e4m3 "FN" and e5m2). Narrowing rounds to nearest even; fp8 saturates finite
// overflow to the largest finite value. Written with selects instead of branches so loops over them
// auto-vectorize, and without floating-point operations on denormals, so FTZ/DAZ modes change
// nothing.
//
// Everything here has internal linkage on purpose: the kernel loops are compiled once per
// instruction set (reduce_loops.inc), and an inline function with external linkage would be merged
// by the linker across those translation units, so the baseline code could end up calling a copy
// compiled for AVX2.
#pragma once

#include <cstdint>

namespace dc::kernels {
namespace {

inline uint32_t float_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
inline float bits_float(uint32_t u) { return __builtin_bit_cast(float, u); }

// Finite magnitude (sign removed) of a format with M mantissa bits and exponent bias Bias.
// Subnormals go through an exact int->float conversion and a power-of-two scale (both normal).
template <int M, int Bias>
inline float widen_finite_magnitude(uint32_t em) {
  const uint32_t normal = (em << (23 - M)) + (uint32_t(127 - Bias) << 23);
  const float subnormal = float(int32_t(em)) * bits_float(uint32_t(127 + 1 - Bias - M) << 23);
  return em < (1u << M) ? subnormal : bits_float(normal);
}

// Rounds the magnitude bits ax (not NaN) to the format, to nearest even, clamped to MaxCode.
template <int M, int Bias, uint32_t MaxCode>
inline uint32_t narrow_magnitude(uint32_t ax) {
  constexpr int kShift = 23 - M;
  constexpr uint32_t kMinNormal = uint32_t(127 + 1 - Bias) << 23;
  // Normal range: rebias the exponent, then round the dropped mantissa bits (the carry may roll
  // into the exponent, which is the correct encoding).
  const uint32_t r = ax - (uint32_t(127 - Bias) << 23);
  uint32_t normal = (r + ((1u << (kShift - 1)) - 1) + ((r >> kShift) & 1)) >> kShift;
  normal = normal < MaxCode ? normal : MaxCode;
  // Subnormal range: the value in units of the smallest subnormal is mant >> s, rounded.
  const uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
  const int32_t s_raw = (127 + 23 + 1 - Bias - M) - int32_t(ax >> 23);
  const uint32_t s = uint32_t(s_raw < 1 ? 1 : s_raw < 31 ? s_raw : 31);  // used only if subnormal
  const uint32_t subnormal = (mant + ((1u << (s - 1)) - 1) + ((mant >> s) & 1)) >> s;
  return ax < kMinNormal ? subnormal : normal;
}

// --- IEEE binary16 ---
inline float half_to_float_inline(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  // Inf/NaN keep their payload; NaNs come out quiet, as F16C's vcvtph2ps does.
  const uint32_t special = 0x7f800000u | (em << 13) | (em > 0x7c00u ? 0x400000u : 0u);
  const uint32_t mag = em >= 0x7c00u ? special : float_bits(widen_finite_magnitude<10, 15>(em));
  return bits_float(sign | mag);
}

inline uint16_t float_to_half_inline(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  // Overflow becomes infinity (MaxCode is the infinity code). NaN: quiet, top payload bits kept,
  // matching F16C's vcvtps2ph.
  const uint32_t nan = 0x7e00u | ((ax >> 13) & 0x3ffu);
  const uint32_t mag = ax > 0x7f800000u ? nan : narrow_magnitude<10, 15, 0x7c00u>(ax);
  return uint16_t(sign | mag);
}

// --- bfloat16: the top half of a float32 ---
inline float bf16_to_float_inline(uint16_t b) { return bits_float(uint32_t(b) << 16); }

inline uint16_t float_to_bf16_inline(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t nan = (x >> 16) | 0x40u;
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  return uint16_t((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

// --- fp8 e4m3 (OCP "FN"): bias 7, no infinities, 0x7f/0xff are NaN, max 448 ---
inline float fp8e4m3_to_float_inline(uint8_t v) {
  const uint32_t sign = uint32_t(v & 0x80u) << 24;
  const uint32_t em = v & 0x7fu;
  const uint32_t mag = em == 0x7fu ? 0x7fc00000u : float_bits(widen_finite_magnitude<3, 7>(em));
  return bits_float(sign | mag);
}

inline uint8_t float_to_fp8e4m3_inline(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 24) & 0x80u;
  const uint32_t ax = x & 0x7fffffffu;
  // Infinity and finite overflow both saturate to 448 (code 0x7e).
  const uint32_t mag = ax > 0x7f800000u ? 0x7fu : narrow_magnitude<3, 7, 0x7eu>(ax);
  return uint8_t(sign | mag);
}

// --- fp8 e5m2: bias 15, IEEE-like with infinities, max 57344 ---
inline float fp8e5m2_to_float_inline(uint8_t v) {
  const uint32_t sign = uint32_t(v & 0x80u) << 24;
  const uint32_t em = v & 0x7fu;
  const uint32_t special = 0x7f800000u | (em << 21) | (em > 0x7cu ? 0x400000u : 0u);
  const uint32_t mag = em >= 0x7cu ? special : float_bits(widen_finite_magnitude<2, 15>(em));
  return bits_float(sign | mag);
}

inline uint8_t float_to_fp8e5m2_inline(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 24) & 0x80u;
  const uint32_t ax = x & 0x7fffffffu;
  // Finite overflow saturates to 57344 (0x7b); an infinite input is not an overflow and stays
  // infinite (0x7c), since the format can carry it.
  const uint32_t finite = narrow_magnitude<2, 15, 0x7bu>(ax);
  const uint32_t mag = ax > 0x7f800000u ? 0x7fu : ax == 0x7f800000u ? 0x7cu : finite;
  return uint8_t(sign | mag);
}

}  // namespace
}  // namespace dc::kernels
