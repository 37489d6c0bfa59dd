// The spec grammar: what each item sets, the canonical text, and the errors for bad specs.
#include <gtest/gtest.h>

#include "base/error.h"
#include "compression/form/spec.h"

namespace dc::compression::test {
namespace {

TEST(Spec, ItemsSetTheirFields) {
  const Spec s = parse_spec("topk:0.001,q8,huffman,ef:0.9");
  EXPECT_EQ(s.selection, Selection::topk_exact);
  EXPECT_DOUBLE_EQ(s.fraction, 0.001);
  EXPECT_TRUE(s.q8);
  EXPECT_EQ(s.rounding, Rounding::nearest);
  EXPECT_EQ(s.block, 256u);
  EXPECT_TRUE(s.huffman);
  EXPECT_TRUE(s.error_feedback);
  EXPECT_FLOAT_EQ(s.beta, 0.9f);

  const Spec q = parse_spec("q8:stochastic:128, ef");
  EXPECT_EQ(q.selection, Selection::dense);
  EXPECT_EQ(q.rounding, Rounding::stochastic);
  EXPECT_EQ(q.block, 128u);
  EXPECT_TRUE(q.error_feedback);
  EXPECT_EQ(q.beta, 1.0f);

  EXPECT_EQ(parse_spec("topk:0.01:sampled").selection, Selection::topk_sampled);
  EXPECT_EQ(parse_spec("q8:64").block, 64u);
  EXPECT_EQ(parse_spec("q8,chunk:4096").chunk_log2, 12u);

  const Spec a = parse_spec("auto");
  EXPECT_EQ(a.selection, Selection::automatic);
  EXPECT_DOUBLE_EQ(a.fraction, Spec::kDefaultAutoFraction);
  EXPECT_TRUE(a.q8 && a.huffman);
  EXPECT_DOUBLE_EQ(parse_spec("auto:0.01,ef").fraction, 0.01);
}

TEST(Spec, CanonicalTextParsesBack) {
  for (const char* text :
       {"topk:0.001,q8,huffman,ef:0.9", "q8,ef", "q8:stochastic", "auto", "auto:0.01,ef", "topk:0.5:sampled",
        "topk:1,huffman", "q8:stochastic:64,huffman,chunk:1048576", "auto,q8:stochastic,ef:0.5"}) {
    const Spec s = parse_spec(text);
    EXPECT_EQ(parse_spec(s.to_string()), s) << text << " -> " << s.to_string();
  }
  EXPECT_EQ(parse_spec("ef:0.9 , huffman,q8,topk:0.001").to_string(), "topk:0.001,q8,huffman,ef:0.9");
  EXPECT_EQ(parse_spec("auto,huffman,q8").to_string(), "auto");
}

void expect_error(const char* text, const char* fragment) {
  try {
    parse_spec(text);
    ADD_FAILURE() << "'" << text << "' parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), dcInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Spec, BadSpecsSayWhy) {
  expect_error("", "is empty");
  expect_error("q8,,ef", "empty item");
  expect_error("zstd", "item 'zstd' is unknown");
  expect_error("topk", "must be topk:FRACTION");
  expect_error("topk:0", "outside (0, 1]");
  expect_error("topk:1.5", "outside (0, 1]");
  expect_error("topk:abc", "'abc' where a fraction");
  expect_error("topk:0.1:fast", "use exact or sampled");
  expect_error("topk:nan", "where a fraction");
  expect_error("q8:8", "block size 8");
  expect_error("q8:stochastic:nearest", "must be q8");
  expect_error("q8:256:stochastic", "must be q8");
  expect_error("q8,q8", "repeats");
  expect_error("ef:0", "decay outside");
  expect_error("ef:1.01", "decay outside");
  expect_error("ef:1e-80", "decay outside");  // found by fuzz_spec: 0 as a float32
  expect_error("ef", "needs topk, q8 or auto");
  expect_error("huffman", "needs topk, q8 or auto");
  expect_error("topk:0.1,auto", "second selection");
  expect_error("q8,chunk:5000", "power of two");
  expect_error("q8,chunk:2048", "power of two");
  expect_error("huffman:1,q8", "takes no argument");
}

TEST(Spec, KeptTarget) {
  EXPECT_EQ(kept_target(0.001, 0), 0u);
  EXPECT_EQ(kept_target(0.001, 10), 1u);
  EXPECT_EQ(kept_target(0.001, 262144), 263u);
  EXPECT_EQ(kept_target(0.5, 3), 2u);
  EXPECT_EQ(kept_target(1.0, 7), 7u);
}

}  // namespace
}  // namespace dc::compression::test
