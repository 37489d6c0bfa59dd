// The AVX2 and baseline loop sets produce the same bytes, residuals and decoded values, for every
// spec and datatype (a later GPU implementation is held to the same).
#include <gtest/gtest.h>

#include "tests/compression/test_support.h"

namespace dc::compression::test {
namespace {

const char* const kSpecs[] = {"q8",
                              "q8:stochastic,huffman,ef",
                              "q8,huffman,ef:0.9",
                              "topk:0.01,q8,huffman,ef",
                              "topk:0.001:sampled,q8:stochastic,huffman,ef:0.5",
                              "topk:0.01,huffman,ef",
                              "topk:0.3,q8,huffman,ef",
                              "auto,ef",
                              "topk:0.05,q8:64,chunk:4096"};

TEST(Isa, AvxAndBaselineAgreeBitForBit) {
  if (!isa_available(Isa::avx2)) GTEST_SKIP() << "no AVX2 loop set on this build or CPU";
  EXPECT_STREQ(codec_kernels(Isa::avx2).name, "avx2");
  EXPECT_STREQ(codec_kernels(Isa::baseline).name, "baseline");
  for (const char* text : kSpecs) {
    const Spec spec = parse_spec(text);
    for (dcDataType_t type : {dcFloat32, dcFloat16, dcBfloat16}) {
      for (Dist dist : {Dist::normal, Dist::lognormal}) {
        const size_t n = 200003;
        std::vector<float> values = make_values(dist, n, 17);
        values[12345] = std::numeric_limits<float>::quiet_NaN();
        values[99999] = -std::numeric_limits<float>::infinity();
        TypedBuffer in(type, values);
        Residual ra(n), rb(n);
        std::vector<uint8_t> a, b;
        for (uint64_t step = 0; step < 2; ++step) {  // the second call starts from the residual
          a = encode(spec, in, spec.error_feedback ? &ra : nullptr, step, Isa::avx2);
          b = encode(spec, in, spec.error_feedback ? &rb : nullptr, step, Isa::baseline);
          ASSERT_EQ(a, b) << text << " " << type_name(type) << " step " << step;
          ASSERT_EQ(std::memcmp(ra.data(), rb.data(), 4 * n), 0) << text;
        }
        for (dcDataType_t out : {dcFloat32, dcFloat16, dcBfloat16}) {
          TypedBuffer da(out, make_values(Dist::normal, n, 5)), db = da;
          decode_accumulate(a, {out, da.data(), n}, Isa::avx2);
          decode_accumulate(a, {out, db.data(), n}, Isa::baseline);
          ASSERT_EQ(da.bytes, db.bytes) << text << " into " << type_name(out);
        }
      }
    }
  }
}

TEST(Isa, ChecksumsAgree) {
  if (!isa_available(Isa::avx2)) GTEST_SKIP() << "no AVX2 loop set on this build or CPU";
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 131 + 7);
  for (size_t len : {0, 1, 7, 8, 9, 63, 1000}) {
    EXPECT_EQ(codec_kernels(Isa::avx2).crc32c(0, data.data(), len),
              codec_kernels(Isa::baseline).crc32c(0, data.data(), len));
  }
  // The CRC32C check value of "123456789".
  const uint8_t check[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(codec_kernels(Isa::baseline).crc32c(0, check, 9), 0xe3069283u);
  EXPECT_EQ(codec_kernels(Isa::avx2).crc32c(0, check, 9), 0xe3069283u);
}

}  // namespace
}  // namespace dc::compression::test
