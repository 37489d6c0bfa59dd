// Error feedback: after each call the residual is exactly beta * (input + old residual - sent),
// with "sent" what a decoder reconstructs; with beta = 1 nothing is lost over many calls.
#include <gtest/gtest.h>

#include "tests/compression/test_support.h"

namespace dc::compression::test {
namespace {

const char* const kEfSpecs[] = {"q8,ef",
                                "q8:stochastic,huffman,ef",
                                "q8,ef:0.9",
                                "topk:0.01,ef",
                                "topk:0.01,q8,huffman,ef",
                                "topk:0.01:sampled,q8,huffman,ef:0.5",
                                "topk:0.01:sampled,ef:0.7",
                                "topk:0.3,q8,ef",
                                "topk:0.3,ef",
                                "auto,ef",
                                "topk:0.001,q8:stochastic,huffman,ef"};

TEST(ErrorFeedback, ResidualIsBetaTimesWhatWasNotSent) {
  for (const char* text : kEfSpecs) {
    const Spec spec = parse_spec(text);
    for (dcDataType_t type : {dcFloat32, dcFloat16, dcBfloat16}) {
      const size_t n = 150000;
      Residual residual(n);
      for (uint64_t step = 0; step < 3; ++step) {
        TypedBuffer in(type, make_values(Dist::laplace, n, step * 31 + 1));
        const std::vector<float> x = in.floats();
        const std::vector<float> before(residual.data(), residual.data() + n);
        const std::vector<float> sent = decode(encode(spec, in, &residual, step), n);
        for (size_t i = 0; i < n; ++i) {
          const float want = spec.beta * ((x[i] + before[i]) - sent[i]);
          ASSERT_EQ(bits(residual.data()[i]), bits(want))
              << text << " " << type_name(type) << " step " << step << " element " << i;
        }
      }
    }
  }
}

TEST(ErrorFeedback, NothingIsLostWithBetaOne) {
  // Sum over steps of what was sent, plus the last residual, equals the sum of the inputs.
  for (const char* text : {"topk:0.01,q8,huffman,ef", "q8:stochastic,ef", "topk:0.001:sampled,ef"}) {
    const Spec spec = parse_spec(text);
    const size_t n = 20000;
    Residual residual(n);
    std::vector<double> inputs(n, 0.0), sent(n, 0.0);
    for (uint64_t step = 0; step < 40; ++step) {
      TypedBuffer in(dcFloat32, make_values(Dist::normal, n, step + 100));
      const std::vector<float> dec = decode(encode(spec, in, &residual, step), n);
      for (size_t i = 0; i < n; ++i) {
        inputs[i] += in.get(i);
        sent[i] += dec[i];
      }
    }
    double worst = 0;
    for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::fabs(sent[i] + residual.data()[i] - inputs[i]));
    EXPECT_LT(worst, 1e-8) << text;  // float rounding only (values ~1e-3)
  }
}

TEST(ErrorFeedback, DecayedResidualConverges) {
  // One element never selected, constant input: r <- beta (x + r) tends to beta x / (1 - beta).
  const size_t n = 1000;
  std::vector<float> x(n, 1e-3f);
  x[0] = 1.0f;  // always the one kept
  TypedBuffer in(dcFloat32, x);
  Residual residual(n);
  const Spec spec = parse_spec("topk:0.001,ef:0.5");
  for (int step = 0; step < 60; ++step) encode(spec, in, &residual, step);
  EXPECT_EQ(residual.data()[0], 0.0f);
  EXPECT_NEAR(residual.data()[1], 0.5e-3 / 0.5, 1e-9);
  residual.reset();
  EXPECT_EQ(residual.data()[1], 0.0f);
}

TEST(ErrorFeedback, ArgumentsAreChecked) {
  TypedBuffer in(dcFloat32, make_values(Dist::normal, 100, 1));
  std::vector<uint8_t> msg(max_message_bytes(parse_spec("q8,ef"), 100));
  Encoder enc;
  Residual wrong(99), right(100);
  EXPECT_THROW(enc.encode(parse_spec("q8,ef"), dcFloat32, in.data(), 100, nullptr, 0, msg), Error);
  EXPECT_THROW(enc.encode(parse_spec("q8,ef"), dcFloat32, in.data(), 100, &wrong, 0, msg), Error);
  EXPECT_THROW(enc.encode(parse_spec("q8"), dcFloat32, in.data(), 100, &right, 0, msg), Error);
  EXPECT_THROW(enc.encode(parse_spec("q8,ef"), dcFloat64, in.data(), 100, &right, 0, msg), Error);
  EXPECT_THROW(
      enc.encode(parse_spec("q8,ef"), dcFloat32, in.data(), 100, &right, 0, std::span(msg).first(msg.size() - 1)),
      Error);
  EXPECT_NO_THROW(enc.encode(parse_spec("q8,ef"), dcFloat32, in.data(), 100, &right, 0, msg));
}

}  // namespace
}  // namespace dc::compression::test
