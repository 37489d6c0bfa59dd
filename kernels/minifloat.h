// Branch-light scalar conversions between float32 and the narrow float formats (IEEE half,
// bfloat16, OCP fp8 e4m3 "FN" and e5m2). Narrowing rounds to nearest even; fp8 saturates finite
// overflow to the largest finite value. Written with selects instead of branches so loops over them
// auto-vectorize. The only floating-point operations are exact and never produce a denormal, and a
// denormal operand gives the same result whether or not it is read as zero, so neither FTZ/DAZ nor
// the rounding mode changes anything. On the CPU fp8 widens through a table of all 256 codes;
// device code, which cannot read a host table, calls the function that builds it.
//
// Every function is DC_HOST_DEVICE, so the CUDA kernels share this text (kernels/element_ops.h).
//
// Everything here has internal linkage on purpose: the kernel loops are compiled once per
// instruction set (reduce_loops.inc), and an inline function with external linkage would be merged
// by the linker across those translation units, so the baseline code could end up calling a copy
// compiled for AVX2.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace dc::kernels {
namespace {

DC_HOST_DEVICE constexpr uint32_t float_bits(float f) { return __builtin_bit_cast(uint32_t, f); }
DC_HOST_DEVICE constexpr float bits_float(uint32_t u) { return __builtin_bit_cast(float, u); }

// Finite magnitude (sign removed) of a format with M mantissa bits and exponent bias Bias.
// Subnormals go through an exact int->float conversion and a power-of-two scale (both normal).
template <int M, int Bias>
DC_HOST_DEVICE constexpr float widen_finite_magnitude(uint32_t em) {
  const uint32_t normal = (em << (23 - M)) + (uint32_t(127 - Bias) << 23);
  const float subnormal = float(int32_t(em)) * bits_float(uint32_t(127 + 1 - Bias - M) << 23);
  return em < (1u << M) ? subnormal : bits_float(normal);
}

// Rounds the magnitude bits ax (not NaN) to the format, to nearest even, clamped to MaxCode.
template <int M, int Bias, uint32_t MaxCode>
DC_HOST_DEVICE inline uint32_t narrow_magnitude(uint32_t ax) {
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
DC_HOST_DEVICE inline float half_to_float_inline(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;
  // Inf/NaN keep their payload; NaNs come out quiet, as F16C's vcvtph2ps does.
  const uint32_t special = 0x7f800000u | (em << 13) | (em > 0x7c00u ? 0x400000u : 0u);
  const uint32_t mag = em >= 0x7c00u ? special : float_bits(widen_finite_magnitude<10, 15>(em));
  return bits_float(sign | mag);
}

DC_HOST_DEVICE inline uint16_t float_to_half_inline(float f) {
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
DC_HOST_DEVICE inline float bf16_to_float_inline(uint16_t b) { return bits_float(uint32_t(b) << 16); }

DC_HOST_DEVICE inline uint16_t float_to_bf16_inline(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t nan = (x >> 16) | 0x40u;
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  return uint16_t((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

// --- fp8: on the CPU, widening reads a table of all 256 codes, built at compile time by the
// decode function (cheaper than decoding each element); device code decodes. Narrowing returns
// the code in a uint32_t so that a loop can store it to 32-bit lanes: when the loop stores bytes,
// GCC narrows every intermediate value to bytes, a slowdown.
struct Fp8Table {
  float value[256];
};

template <class Decode>
constexpr Fp8Table fp8_table(Decode decode) {
  Fp8Table table{};
  for (uint32_t code = 0; code < 256; ++code) table.value[code] = decode(code);
  return table;
}

// Rounds the magnitude bits ax of a float to nearest even, for a format with M mantissa bits and
// exponent bias Bias, without clamping: values beyond the largest finite one (infinity and NaN
// included) give codes above it. Signed arithmetic, so compares, min and max vectorize to single
// instructions (ax < 2^31).
template <int M, int Bias>
DC_HOST_DEVICE inline int32_t narrow_fp8_unclamped(int32_t ax) {
  constexpr int kShift = 23 - M;
  constexpr int32_t kMinNormal = (127 + 1 - Bias) << 23;
  // Normal range: rebias the exponent, then round the dropped mantissa bits (the carry may roll
  // into the exponent, which is the correct encoding).
  const int32_t normal = (ax - ((127 - Bias) << 23) + ((1 << (kShift - 1)) - 1) + ((ax >> kShift) & 1)) >> kShift;
  // Subnormal range: |f| * 2^(23+Bias+M) is an exact integer whenever f can round to nonzero (a
  // smaller f truncates below 2^23, which rounds to 0), and the code is that integer / 2^24,
  // rounded. The multiply is exact and the conversion truncates, so the rounding mode plays no
  // part; the clamp keeps the conversion in range.
  const float clamped = bits_float(uint32_t(ax < kMinNormal ? ax : kMinNormal));
  const int32_t units = int32_t(clamped * bits_float(uint32_t(127 + 23 + Bias + M) << 23));
  const int32_t subnormal = (units + 0x7fffff + ((units >> 24) & 1)) >> 24;
  // Outside its own range each result is at most the right code (the clamped subnormal one is the
  // smallest normal code), so the larger of the two is the code: a max instead of a compare+select.
  return subnormal > normal ? subnormal : normal;
}

// --- fp8 e4m3 (OCP "FN"): bias 7, no infinities, 0x7f/0xff are NaN, max 448 ---
DC_HOST_DEVICE constexpr float decode_fp8e4m3(uint32_t v) {
  const uint32_t sign = (v & 0x80u) << 24;
  const uint32_t em = v & 0x7fu;
  const uint32_t mag = em == 0x7fu ? 0x7fc00000u : float_bits(widen_finite_magnitude<3, 7>(em));
  return bits_float(sign | mag);
}

constexpr Fp8Table kFp8e4m3Table = fp8_table([](uint32_t v) { return decode_fp8e4m3(v); });

DC_HOST_DEVICE inline float fp8e4m3_to_float_inline(uint8_t v) {
#if defined(__CUDA_ARCH__)
  return decode_fp8e4m3(v);
#else
  return kFp8e4m3Table.value[v];
#endif
}

DC_HOST_DEVICE inline uint32_t float_to_fp8e4m3_inline(float f) {
  const uint32_t x = float_bits(f);
  const int32_t ax = int32_t(x & 0x7fffffffu);
  // NaN is 0x7f; infinity and finite overflow both saturate to 448 (code 0x7e).
  const int32_t limit = ax > 0x7f800000 ? 0x7f : 0x7e;
  const int32_t code = narrow_fp8_unclamped<3, 7>(ax);
  return ((x >> 24) & 0x80u) | uint32_t(code < limit ? code : limit);
}

// --- fp8 e5m2: bias 15, IEEE-like with infinities, max 57344 ---
DC_HOST_DEVICE constexpr float decode_fp8e5m2(uint32_t v) {
  const uint32_t sign = (v & 0x80u) << 24;
  const uint32_t em = v & 0x7fu;
  const uint32_t special = 0x7f800000u | (em << 21) | (em > 0x7cu ? 0x400000u : 0u);
  const uint32_t mag = em >= 0x7cu ? special : float_bits(widen_finite_magnitude<2, 15>(em));
  return bits_float(sign | mag);
}

constexpr Fp8Table kFp8e5m2Table = fp8_table([](uint32_t v) { return decode_fp8e5m2(v); });

DC_HOST_DEVICE inline float fp8e5m2_to_float_inline(uint8_t v) {
#if defined(__CUDA_ARCH__)
  return decode_fp8e5m2(v);
#else
  return kFp8e5m2Table.value[v];
#endif
}

DC_HOST_DEVICE inline uint32_t float_to_fp8e5m2_inline(float f) {
  const uint32_t x = float_bits(f);
  const int32_t ax = int32_t(x & 0x7fffffffu);
  // NaN is 0x7f. Finite overflow saturates to 57344 (0x7b); an infinite input is not an overflow
  // and stays infinite (0x7c), since the format can carry it.
  const int32_t limit = ax > 0x7f800000 ? 0x7f : ax == 0x7f800000 ? 0x7c : 0x7b;
  const int32_t code = narrow_fp8_unclamped<2, 15>(ax);
  return ((x >> 24) & 0x80u) | uint32_t(code < limit ? code : limit);
}

}  // namespace
}  // namespace dc::kernels
