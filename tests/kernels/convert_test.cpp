// Exhaustive tests of the scalar format conversions against the reference model, plus names and
// sizes of datatypes and ops.
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "kernels/reduce.h"
#include "tests/kernels/format_reference.h"

namespace dc::test {
namespace {

struct Conversion {
  const char* name;
  const FormatReference& ref;
  float (*widen)(uint32_t);
  uint32_t (*narrow)(float);
};

std::vector<Conversion> conversions() {
  return {
      {"half", half_reference(), [](uint32_t v) { return half_to_float(uint16_t(v)); },
       [](float f) { return uint32_t(float_to_half(f)); }},
      {"bfloat16", bf16_reference(), [](uint32_t v) { return bf16_to_float(uint16_t(v)); },
       [](float f) { return uint32_t(float_to_bf16(f)); }},
      {"fp8e4m3", e4m3_reference(), [](uint32_t v) { return fp8e4m3_to_float(uint8_t(v)); },
       [](float f) { return uint32_t(float_to_fp8e4m3(f)); }},
      {"fp8e5m2", e5m2_reference(), [](uint32_t v) { return fp8e5m2_to_float(uint8_t(v)); },
       [](float f) { return uint32_t(float_to_fp8e5m2(f)); }},
  };
}

// Narrowing f must give the reference rounding (any NaN code for a NaN).
void expect_narrows_like_reference(const Conversion& c, float f) {
  const uint32_t got = c.narrow(f);
  if (std::isnan(f)) {
    EXPECT_TRUE(c.ref.is_nan(got)) << c.name << " NaN -> " << got;
  } else {
    EXPECT_EQ(got, c.ref.round(f)) << c.name << " " << f << " (bits 0x" << std::hex << std::bit_cast<uint32_t>(f)
                                   << ")";
  }
}

TEST(KernelConvert, WidenMatchesReferenceForEveryPattern) {
  for (const Conversion& c : conversions()) {
    for (uint32_t code = 0; code < 2 * c.ref.magnitude_codes(); ++code) {
      const double expected = c.ref.decode(code);
      const float got = c.widen(code);
      if (std::isnan(expected)) {
        ASSERT_TRUE(std::isnan(got)) << c.name << " code " << code;
      } else {
        ASSERT_EQ(double(got), expected) << c.name << " code " << code;
        ASSERT_EQ(std::signbit(got), std::signbit(expected)) << c.name << " code " << code;
      }
    }
  }
}

TEST(KernelConvert, RoundTripIsIdentityForEveryNonNanPattern) {
  for (const Conversion& c : conversions()) {
    int checked = 0;
    for (uint32_t code = 0; code < 2 * c.ref.magnitude_codes(); ++code) {
      const float f = c.widen(code);
      if (std::isnan(f)) {
        EXPECT_TRUE(c.ref.is_nan(c.narrow(f))) << c.name << " NaN code " << code;
        continue;
      }
      ASSERT_EQ(c.narrow(f), code) << c.name << " code " << code;
      ++checked;
    }
    EXPECT_GT(checked, int(c.ref.magnitude_codes()));
  }
}

// Every value, every midpoint between neighbours (ties go to even) and the floats just beside each
// midpoint, with both signs.
TEST(KernelConvert, NarrowRoundsToNearestEvenAtEveryMidpoint) {
  for (const Conversion& c : conversions()) {
    const std::vector<double>& v = c.ref.finite_values();
    for (size_t k = 0; k + 1 < v.size(); ++k) {
      const float lo = float(v[k]);
      const float mid = float((v[k] + v[k + 1]) / 2);  // exact: needs one more bit than the format
      ASSERT_EQ(double(mid), (v[k] + v[k + 1]) / 2);
      for (float f : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
        expect_narrows_like_reference(c, f);
        expect_narrows_like_reference(c, -f);
      }
    }
  }
}

TEST(KernelConvert, NarrowOverflowInfinityAndNan) {
  for (const Conversion& c : conversions()) {
    const float max = float(c.ref.max_finite());
    const double ulp = c.ref.max_finite() - c.ref.finite_values()[c.ref.max_finite_code() - 1];
    const float tie = float(c.ref.max_finite() + ulp / 2);
    for (float f : {max, std::nextafter(max, INFINITY), std::nextafter(tie, 0.0f), tie, std::nextafter(tie, INFINITY),
                    2 * max, FLT_MAX, INFINITY, NAN}) {
      expect_narrows_like_reference(c, f);
      expect_narrows_like_reference(c, -f);
    }
  }
}

TEST(KernelConvert, NarrowRandomFloatsLikeReference) {
  std::mt19937 rng(7);
  for (const Conversion& c : conversions()) {
    for (int i = 0; i < 200000; ++i) expect_narrows_like_reference(c, std::bit_cast<float>(uint32_t(rng())));
  }
}

// fp8 narrowing multiplies in float below the smallest normal fp8 value (minifloat.h); neither the
// rounding mode nor FTZ/DAZ may change a result there, denormal floats included.
TEST(KernelConvert, Fp8NarrowIgnoresRoundingModeAndDenormalFlags) {
  std::vector<float> inputs;
  for (uint32_t u = 0; u < 0x3d000000u; u += 1021) {  // past 2^-6, the smallest normal e4m3
    inputs.push_back(std::bit_cast<float>(u));
    inputs.push_back(-std::bit_cast<float>(u));
  }
  auto narrow_all = [&] {
    std::vector<uint32_t> codes;
    for (float f : inputs) codes.push_back(float_to_fp8e4m3(f) | float_to_fp8e5m2(f) << 8);
    return codes;
  };
  const std::vector<uint32_t> expected = narrow_all();
  for (int round : {FE_TONEAREST, FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    for (bool flush : {false, true}) {
#if defined(__SSE__)
      const unsigned csr = _mm_getcsr();
      if (flush) _mm_setcsr(csr | 0x8040u);  // FTZ | DAZ
#endif
      std::fesetround(round);
      const std::vector<uint32_t> got = narrow_all();
      std::fesetround(FE_TONEAREST);
#if defined(__SSE__)
      _mm_setcsr(csr);
#endif
      EXPECT_TRUE(got == expected) << "rounding mode " << round << ", flush " << flush;
    }
  }
}

TEST(KernelConvert, KnownValues) {
  EXPECT_EQ(float_to_fp8e4m3(1000.0f), 0x7e);  // saturates to 448
  EXPECT_EQ(float_to_fp8e4m3(-1000.0f), 0xfe);
  EXPECT_EQ(float_to_fp8e4m3(INFINITY), 0x7e);
  EXPECT_EQ(fp8e4m3_to_float(0x7e), 448.0f);
  EXPECT_TRUE(std::isnan(fp8e4m3_to_float(0x7f)));
  EXPECT_TRUE(std::isnan(fp8e4m3_to_float(0xff)));
  EXPECT_EQ(float_to_fp8e4m3(NAN) & 0x7f, 0x7f);
  EXPECT_EQ(float_to_fp8e5m2(1e6f), 0x7b);  // saturates to 57344
  EXPECT_EQ(fp8e5m2_to_float(0x7b), 57344.0f);
  EXPECT_EQ(float_to_fp8e5m2(-INFINITY), 0xfc);  // infinity itself is kept
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65519.99f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);  // overflows to infinity, as IEEE does
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie to even
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x3f818000u)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::bit_cast<float>(0x7f800001u)))));
}

TEST(KernelNames, DatatypesAndOps) {
  const char* names[] = {"int8", "uint8", "int32",  "uint32",   "int64",   "uint64",
                         "half", "float", "double", "bfloat16", "fp8e4m3", "fp8e5m2"};
  const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  for (int dt = 0; dt < dcNumTypes; ++dt) {
    EXPECT_STREQ(datatype_name(dcDataType_t(dt)), names[dt]);
    EXPECT_EQ(datatype_size(dcDataType_t(dt)), sizes[dt]);
  }
  EXPECT_STREQ(datatype_name(dcNumTypes), "unknown");
  EXPECT_EQ(datatype_size(dcNumTypes), 0u);
  const char* ops[] = {"sum", "prod", "max", "min", "avg"};
  for (int op = 0; op < dcNumOps; ++op) EXPECT_STREQ(redop_name(dcRedOp_t(op)), ops[op]);
}

}  // namespace
}  // namespace dc::test
