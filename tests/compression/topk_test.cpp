// Top-k selection: exact against a full sort, the tie-break, the sampled threshold's count, and
// the residual each pass leaves behind.
#include <gtest/gtest.h>

#include "compression/select.h"
#include "tests/compression/test_support.h"

namespace dc::compression::test {
namespace {

std::vector<uint32_t> indices(const std::vector<Candidate>& c) {
  std::vector<uint32_t> out;
  for (const Candidate& x : c) out.push_back(x.index);
  return out;
}

TopKSelector::Result run(const std::vector<float>& x, uint64_t k, bool sampled, float* residual = nullptr,
                         float beta = 1.0f) {
  TopKSelector sel;
  TopKSelector::Result r;
  sel.select(codec_kernels(), {x.data(), ElemType::f32, residual}, x.size(), k, sampled, residual, beta, r);
  return r;
}

TEST(TopK, ExactMatchesASort) {
  for (Dist d : {Dist::normal, Dist::laplace, Dist::lognormal}) {
    for (size_t n : {1, 7, 1000, 70000, 500000}) {
      const std::vector<float> x = make_values(d, n, n * 3 + int(d));
      for (double f : {0.001, 0.01, 0.3, 1.0}) {
        const uint64_t k = kept_target(f, n);
        const auto r = run(x, k, false);
        ASSERT_EQ(indices(r.kept), reference_topk(x, k)) << "n " << n << " f " << f;
        for (const Candidate& c : r.kept) ASSERT_EQ(c.value, x[c.index]);
        EXPECT_TRUE(r.nonfinite.empty());
      }
    }
  }
}

TEST(TopK, TiesGoToTheLowerIndex) {
  // Equal magnitudes of both signs: the first k indices win, in both modes.
  std::vector<float> x(300000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 3 == 0) ? -0.5f : 0.5f;
  x[200000] = 0.75f;  // one larger value far down
  for (bool sampled : {false, true}) {
    const auto r = run(x, 100, sampled);
    std::vector<uint32_t> want = {};
    for (uint32_t i = 0; i < 99; ++i) want.push_back(i);
    want.push_back(200000);
    EXPECT_EQ(indices(r.kept), want) << (sampled ? "sampled" : "exact");
  }
}

TEST(TopK, SampledKeepsAPrefixOfTheExactOrderWithinTolerance) {
  for (Dist d : {Dist::normal, Dist::laplace, Dist::lognormal}) {
    for (uint64_t seed = 0; seed < 3; ++seed) {
      for (size_t n : {5000, 262144, 1 << 20}) {
        const std::vector<float> x = make_values(d, n, seed * 77 + n);
        for (double f : {0.001, 0.01, 0.1}) {
          const uint64_t k = kept_target(f, n);
          const auto r = run(x, k, true);
          const uint64_t got = r.kept.size();
          ASSERT_LE(got, k);
          EXPECT_GE(double(got), 0.9 * double(k)) << "n " << n << " f " << f;
          // Whatever the count, the kept set is the top `got` of the exact order.
          ASSERT_EQ(indices(r.kept), reference_topk(x, got));
        }
      }
    }
  }
}

TEST(TopK, SampledThresholdAimsAtFourTimesK) {
  const std::vector<float> x = make_values(Dist::normal, 1 << 20, 5);
  const uint64_t k = 1049;
  const uint32_t thr = TopKSelector::sampled_threshold({x.data(), ElemType::f32, nullptr}, x.size(), k);
  size_t above = 0;
  for (float v : x) above += (bits(v) & 0x7fffffffu) >= thr;
  EXPECT_GT(above, 2 * k);
  EXPECT_LT(above, 8 * k);
}

TEST(TopK, ResidualIsBetaTimesAccumulated) {
  const std::vector<float> x = make_values(Dist::laplace, 100000, 9);
  for (bool sampled : {false, true}) {
    for (float beta : {1.0f, 0.5f}) {
      std::vector<float> r0 = make_values(Dist::normal, x.size(), 10, 1e-4f);
      std::vector<float> r = r0;
      run(x, 100, sampled, r.data(), beta);
      for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(r[i], beta * (x[i] + r0[i])) << i;
    }
  }
}

TEST(TopK, ConstantInputCompactsToTheFirstIndices) {
  // Every element in the histogram's boundary bucket: the candidate list is cut as it grows.
  const std::vector<float> x(1 << 20, 1.0f);
  const auto r = run(x, 5000, false);
  ASSERT_EQ(r.kept.size(), 5000u);
  EXPECT_EQ(r.kept.front().index, 0u);
  EXPECT_EQ(r.kept.back().index, 4999u);
}

}  // namespace
}  // namespace dc::compression::test
