// NaN and infinities are never dropped: the message flags them, the decoded sum at their position
// is what a dense sum gives, the other elements are unharmed and residuals stay finite.
#include <gtest/gtest.h>

#include <limits>

#include "compression/form/wire_format.h"
#include "tests/compression/test_support.h"

namespace dc::compression::test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(NonFinite, DecodedLikeADenseSum) {
  const size_t n = 70000;
  const size_t nan_at = 5, pinf_at = 300, ninf_at = 66000, cancel_at = 40000;
  for (const char* text :
       {"q8", "q8,huffman,ef", "q8:stochastic,ef:0.5", "topk:0.01,q8,huffman,ef", "topk:0.01:sampled,ef",
        "topk:0.001,q8", "topk:0.3,q8,ef", "topk:0.3,huffman,ef", "auto,ef"}) {
    const Spec spec = parse_spec(text);
    for (dcDataType_t type : {dcFloat32, dcFloat16, dcBfloat16}) {
      std::vector<float> x = make_values(Dist::normal, n, 3);
      x[nan_at] = kNaN;
      x[pinf_at] = kInf;
      x[ninf_at] = -kInf;
      x[cancel_at] = kInf;
      TypedBuffer in(type, x);
      Residual residual(n);
      EncodeResult r;
      const std::vector<uint8_t> msg = encode(spec, in, spec.error_feedback ? &residual : nullptr, 1, Isa::best, &r);
      EXPECT_TRUE(r.nonfinite);
      EXPECT_TRUE(msg[5] & wire::kNonFinite);

      // The destination holds another rank's partial sum.
      std::vector<float> start = make_values(Dist::normal, n, 4);
      start[ninf_at] = -kInf;
      start[cancel_at] = -kInf;
      TypedBuffer dst(type, start);
      decode_accumulate(msg, {type, dst.data(), n});
      const std::string where = std::string(text) + " " + type_name(type);
      EXPECT_TRUE(std::isnan(dst.get(nan_at))) << where;
      EXPECT_EQ(dst.get(pinf_at), kInf) << where;
      EXPECT_EQ(dst.get(ninf_at), -kInf) << where;
      EXPECT_TRUE(std::isnan(dst.get(cancel_at))) << where;  // +Inf + -Inf
      for (size_t i = 0; i < n; ++i) {
        if (i == nan_at || i == pinf_at || i == ninf_at || i == cancel_at) continue;
        ASSERT_TRUE(std::isfinite(dst.get(i))) << where << " element " << i;
        // Dense: start + x within q8 and rounding error; sparse: unchanged, or that.
        const float before = TypedBuffer(type, {start[i]}).get(0);
        const float added = dst.get(i) - before;
        if (r.applied.sparse() && added == 0.0f) continue;
        ASSERT_NEAR(added, x[i], 1e-4) << where << " element " << i;
      }
      if (spec.error_feedback) {
        for (size_t i = 0; i < n; ++i) ASSERT_TRUE(std::isfinite(residual.data()[i])) << where << " element " << i;
        EXPECT_EQ(residual.data()[nan_at], 0.0f);
        EXPECT_EQ(residual.data()[pinf_at], 0.0f);
      }
    }
  }
}

TEST(NonFinite, ScalesIgnoreThem) {
  // A block holding an infinity still quantizes its finite values finely.
  std::vector<float> x(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) * 1e-3f;
  x[17] = kInf;
  TypedBuffer in(dcFloat32, x);
  const std::vector<float> dec = decode(encode(parse_spec("q8"), in), x.size());
  EXPECT_EQ(dec[17], kInf);
  for (size_t i = 0; i < x.size(); ++i) {
    if (i == 17) continue;
    ASSERT_NEAR(dec[i], x[i], 0.255f / 252 * 1.0001f) << i;
  }
}

TEST(NonFinite, FiniteMessagesCarryNoFlag) {
  TypedBuffer in(dcFloat32, make_values(Dist::normal, 1000, 1));
  EXPECT_FALSE(encode(parse_spec("q8,huffman"), in)[5] & wire::kNonFinite);
  EXPECT_FALSE(encode(parse_spec("topk:0.1"), in)[5] & wire::kNonFinite);
}

}  // namespace
}  // namespace dc::compression::test
