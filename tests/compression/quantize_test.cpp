// 8-bit quantization: the error bound of round-to-nearest, stochastic rounding's mean, scale
// blocks over the kept values after a selection, and extreme magnitudes.
#include <gtest/gtest.h>

#include <cfloat>

#include "compression/form/wire_format.h"
#include "tests/compression/test_support.h"

namespace dc::compression::test {
namespace {

TEST(Quantize, NearestIsWithinHalfAStep) {
  std::vector<float> x(4096);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 253) - 126) / 126.0f * 3.0f + float(i % 7) * 1e-3f;
  TypedBuffer in(dcFloat32, x);
  const std::vector<float> dec = decode(encode(parse_spec("q8"), in), x.size());
  for (size_t b = 0; b < x.size(); b += 256) {
    float m = 0;
    for (size_t i = b; i < b + 256; ++i) m = std::max(m, std::fabs(x[i]));
    const float scale = m / 126.0f;
    for (size_t i = b; i < b + 256; ++i) {
      ASSERT_LE(std::fabs(dec[i] - x[i]), 0.5f * scale * (1 + 1e-6f)) << i;
      // A multiple of the scale: q * scale with |q| <= 126.
      const float q = dec[i] / scale;
      ASSERT_NEAR(q, std::nearbyint(q), 1e-3) << i;
      ASSERT_LE(std::fabs(q), 126.001f);
    }
  }
}

TEST(Quantize, StochasticRoundingIsUnbiased) {
  // One block: values between the steps; the mean over many seeds converges to the value.
  const size_t n = 256;
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = (float(i) / n - 0.5f) * 0.1f;
  x[0] = 0.05f;  // block max, exactly representable as q = 126
  TypedBuffer in(dcFloat32, x);
  const Spec spec = parse_spec("q8:stochastic");
  const int seeds = 4000;
  std::vector<double> sum(n, 0.0);
  const float scale = 0.05f / 126.0f;
  for (int s = 0; s < seeds; ++s) {
    const std::vector<float> dec = decode(encode(spec, in, nullptr, uint64_t(s)), n);
    for (size_t i = 0; i < n; ++i) {
      const double lo = std::floor(double(x[i]) / scale) * scale;
      ASSERT_TRUE(std::fabs(dec[i] - lo) < scale * 1e-3 || std::fabs(dec[i] - (lo + scale)) < scale * 1e-3)
          << "element " << i << " went beyond its two neighbouring steps";
      sum[i] += dec[i];
    }
  }
  // Each rounding has standard deviation <= scale / 2: the mean is within 5 sigma of x.
  const double tol = 5.0 * 0.5 * scale / std::sqrt(double(seeds));
  int biased = 0;
  double total_bias = 0;
  for (size_t i = 0; i < n; ++i) {
    const double bias = sum[i] / seeds - x[i];
    biased += std::fabs(bias) > tol;
    total_bias += bias;
  }
  EXPECT_EQ(biased, 0);
  EXPECT_LT(std::fabs(total_bias / n), 0.5 * scale / std::sqrt(double(seeds) * n) * 5);
  // Nearest rounding of the same data is biased for most elements (a sanity check of the test).
  const std::vector<float> nearest = decode(encode(parse_spec("q8"), in), n);
  int off = 0;
  for (size_t i = 0; i < n; ++i) off += std::fabs(double(nearest[i]) - x[i]) > tol;
  EXPECT_GT(off, int(n) / 2);
}

TEST(Quantize, SeedsChangeTheRoundingNotTheShape) {
  TypedBuffer in(dcFloat32, make_values(Dist::normal, 10000, 1));
  const Spec spec = parse_spec("q8:stochastic");
  const auto a = encode(spec, in, nullptr, 1), b = encode(spec, in, nullptr, 2);
  EXPECT_EQ(a.size(), b.size());
  EXPECT_NE(a, b);
}

TEST(Quantize, BlocksRunOverTheKeptValues) {
  // Chunk 0 holds 600 kept elements (3 blocks of 256 kept values), the rest of the kept ones
  // are elsewhere: the chunk carries ceil(600 / 256) scales, not one per 256 positions.
  const size_t n = 1 << 18;
  std::vector<float> x(n, 0.0f);
  for (size_t i = 0; i < 600; ++i) x[i * 100] = 1.0f + float(i) * 1e-3f;
  for (size_t i = 0; i < 100; ++i) x[70000 + i * 500] = 0.5f + float(i) * 1e-3f;
  TypedBuffer in(dcFloat32, x);
  const std::vector<uint8_t> msg = encode(parse_spec("topk:0.00267,q8"), in);  // k = 700
  const MessageHeader h = MessageHeader::parse(std::span(msg).first(MessageHeader::header_bytes(msg)));
  const auto c0 = h.chunk(0), c1 = h.chunk(1);
  EXPECT_EQ(msg[c0.byte_begin], uint8_t(wire::ChunkKind::sparse));
  EXPECT_EQ(wire::get_u32(msg.data() + c0.byte_begin + 1), 600u);
  EXPECT_EQ(c0.byte_end - c0.byte_begin, 1 + 4 + 4 * 3 + 600 * 5u);
  EXPECT_EQ(c1.byte_end - c1.byte_begin, 1 + 4 + 4 * 1 + 100 * 5u);
  const std::vector<float> dec = decode(msg, n);
  for (size_t i = 0; i < n; ++i) ASSERT_NEAR(dec[i], x[i], 1.6f / 252.0f) << i;
}

TEST(Quantize, ExtremeMagnitudes) {
  std::vector<float> x(512, 0.0f);
  x[0] = FLT_MAX;
  x[1] = -FLT_MAX;
  x[2] = 1.0f;
  for (size_t i = 256; i < 512; ++i) x[i] = 1e-35f * float(i);  // a block below 2^-100: zeros
  TypedBuffer in(dcFloat32, x);
  Residual residual(x.size());
  const Spec spec = parse_spec("q8,ef");
  const std::vector<float> dec = decode(encode(spec, in, &residual), x.size());
  EXPECT_TRUE(std::isfinite(dec[0]));
  EXPECT_GT(dec[0], FLT_MAX * 0.99f);
  EXPECT_LT(dec[1], -FLT_MAX * 0.99f);
  for (size_t i = 256; i < 512; ++i) {
    EXPECT_EQ(dec[i], 0.0f);
    EXPECT_EQ(residual.data()[i], x[i]);  // kept for the next call
  }
  for (size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(std::isfinite(residual.data()[i])) << i;
}

}  // namespace
}  // namespace dc::compression::test
