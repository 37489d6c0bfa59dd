// deepcomm-calibrate's parts: the α-β fit (exact points, noise, outliers, a negative intercept,
// too few points), which ranks measure which tier, and the written file: it parses back with the
// fitted α/β, and a cluster view built from it gives the cost model those parameters (predicted
// all-reduce times change accordingly).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "src/plan/select.h"
#include "tools/calibrate/alpha_beta_fit.h"
#include "tools/calibrate/calibration_report.h"
#include "tools/calibrate/tier_pairs.h"
#include "topology/cluster_view.h"
#include "topology/topology_file.h"

namespace dc::calibrate {
namespace {

constexpr double kAlpha = 25e-6;  // 25 µs
constexpr double kBeta = 8e-9;    // 8 ns/B: 1 Gbit/s

std::vector<FitPoint> synthetic(double alpha, double beta, double noise, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  std::vector<FitPoint> points;
  for (double bytes = 8; bytes <= 16 << 20; bytes *= 2)
    points.push_back({bytes, (alpha + beta * bytes) * (1 + jitter(random))});
  return points;
}

TEST(AlphaBetaFit, RecoversExactParameters) {
  const auto fit = fit_alpha_beta(synthetic(kAlpha, kBeta, 0, 1));
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->alpha_s, kAlpha, kAlpha * 1e-9);
  EXPECT_NEAR(fit->beta_s_per_byte, kBeta, kBeta * 1e-9);
  EXPECT_LT(fit->rms_relative_residual, 1e-12);
  EXPECT_EQ(fit->points_used, 5);  // β from 1 MiB .. 16 MiB
}

TEST(AlphaBetaFit, ToleratesNoise) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto fit = fit_alpha_beta(synthetic(kAlpha, kBeta, 0.05, seed));
    ASSERT_TRUE(fit);
    EXPECT_NEAR(fit->alpha_s, kAlpha, kAlpha * 0.05) << "seed " << seed;
    EXPECT_NEAR(fit->beta_s_per_byte, kBeta, kBeta * 0.05) << "seed " << seed;
    EXPECT_GT(fit->rms_relative_residual, 0.005);
    EXPECT_LT(fit->rms_relative_residual, 0.05);
  }
}

TEST(AlphaBetaFit, DropsOutliers) {
  std::vector<FitPoint> points = synthetic(kAlpha, kBeta, 0.02, 7);
  points[3].seconds *= 10;  // a small size disturbed by another process
  points[19].seconds *= 3;  // and a large one
  const auto fit = fit_alpha_beta(points);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->points_used, 4);
  EXPECT_NEAR(fit->alpha_s, kAlpha, kAlpha * 0.03);
  EXPECT_NEAR(fit->beta_s_per_byte, kBeta, kBeta * 0.03);
}

TEST(AlphaBetaFit, SustainedRatePastABurst) {
  // A token bucket (tc tbf) passes the first 512 KiB of a message 12 times faster than its rate.
  constexpr double kBurst = 512 << 10, kFast = kBeta / 12;
  std::vector<FitPoint> points;
  for (double bytes = 8; bytes <= 16 << 20; bytes *= 2)
    points.push_back({bytes, kAlpha + std::min(bytes, kBurst) * kFast + std::max(bytes - kBurst, 0.0) * kBeta});
  const auto fit = fit_alpha_beta(points);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->beta_s_per_byte, kBeta, kBeta * 1e-6);
  EXPECT_NEAR(fit->alpha_s, kAlpha, kAlpha * 0.01);
  EXPECT_GT(fit->rms_relative_residual, 0.3);  // the line does not describe the burst, and says so
}

TEST(AlphaBetaFit, ClampsANegativeIntercept) {
  // Times that fall below the line through the large sizes: the free fit's α would be negative.
  std::vector<FitPoint> points = {{8, 1e-9}, {1 << 20, 1e-3}, {4 << 20, 4.2e-3}};
  const auto fit = fit_alpha_beta(points);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->alpha_s, 0);
  EXPECT_GT(fit->beta_s_per_byte, 0);
}

TEST(AlphaBetaFit, FailsWithoutTwoSizes) {
  EXPECT_FALSE(fit_alpha_beta(std::vector<FitPoint>{}));
  EXPECT_FALSE(fit_alpha_beta(std::vector<FitPoint>{{64, 1e-5}}));
  EXPECT_FALSE(fit_alpha_beta(std::vector<FitPoint>{{64, 1e-5}, {64, 2e-5}}));
  EXPECT_FALSE(fit_alpha_beta(std::vector<FitPoint>{{64, 1e-5}, {128, 0}, {256, -1}}));
  // Time falling with size: no positive β.
  EXPECT_FALSE(fit_alpha_beta(std::vector<FitPoint>{{64, 2e-5}, {1 << 20, 1e-5}}));
}

TEST(TierPairs, OnePairPerTier) {
  const auto view = ClusterView::layout({1, 2, 2}, true);
  const std::vector<TierPair> pairs = tier_pairs(*view);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0].network_tier, -1);
  EXPECT_EQ(pairs[0].leader, 1);  // host 1 is the first with two ranks
  EXPECT_EQ(pairs[0].follower, 2);
  EXPECT_EQ(pairs[1].network_tier, 0);
  EXPECT_EQ(pairs[1].leader, 0);
  EXPECT_EQ(pairs[1].follower, 1);
}

TEST(TierPairs, TwoTiersAndLoneRanks) {
  const topo::TopologyFile file = topo::parse_topology_file(
      R"({"version": 1, "tiers": [
           {"name": "fast", "bandwidth_gbps": 100, "latency_us": 2, "groups": [{"hosts": [0, 1]}, {"hosts": [2]}]},
           {"name": "slow", "bandwidth_gbps": 10, "latency_us": 20}]})",
      "two tiers");
  const auto view = ClusterView::blocks(3, 1, true, &file);
  const std::vector<TierPair> pairs = tier_pairs(*view);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[0].leader, -1);  // no host holds two ranks
  EXPECT_EQ(pairs[1].name, "fast");
  EXPECT_EQ(pairs[1].leader, 0);
  EXPECT_EQ(pairs[1].follower, 1);
  EXPECT_EQ(pairs[2].name, "slow");
  EXPECT_EQ(pairs[2].leader, 0);
  EXPECT_EQ(pairs[2].follower, 2);  // across the groups
}

double best_all_reduce_seconds(const std::shared_ptr<const ClusterView>& view, uint64_t bytes) {
  PlanRequest request;
  request.nranks = view->nranks();
  request.count = bytes / 4;
  request.cluster = view;
  return price_candidates(request).front().seconds;
}

TEST(CalibratedFile, LoadsBackIntoTheCostModel) {
  const auto detected = ClusterView::blocks(2, 2, true);
  const std::vector<TierPair> pairs = tier_pairs(*detected);
  AlphaBetaFit network{kAlpha, kBeta, 0.01, 22};
  const std::vector<TierResult> results = {{pairs[0], 22, AlphaBetaFit{2e-6, 0.1e-9, 0.02, 22}},
                                           {pairs[1], 22, network}};
  const std::string text = topo::write_topology_file(calibrated_file(*detected, results, false));
  const topo::TopologyFile loaded = topo::parse_topology_file(text, "calibrated");
  ASSERT_EQ(loaded.tiers.size(), 1u);
  ASSERT_TRUE(loaded.tiers[0].calibration);
  EXPECT_DOUBLE_EQ(loaded.tiers[0].calibration->alpha_us, 25);
  EXPECT_DOUBLE_EQ(loaded.tiers[0].calibration->beta_ns_per_byte, 8);

  const auto calibrated = ClusterView::blocks(2, 2, true, &loaded);
  EXPECT_DOUBLE_EQ(calibrated->network_tier(0).latency_s, 25e-6);
  EXPECT_DOUBLE_EQ(calibrated->network_tier(0).bandwidth_Bps, 125e6);
  // The default network tier is 10 Gbit/s; measured at 1 Gbit/s, a large all-reduce across the two
  // hosts is predicted several times slower.
  const double before = best_all_reduce_seconds(detected, 64 << 20);
  const double after = best_all_reduce_seconds(calibrated, 64 << 20);
  EXPECT_GT(after, 5 * before);
}

TEST(CalibratedFile, LeavesOutAnUnmeasuredDefaultTier) {
  const auto one_host = ClusterView::blocks(1, 2, true);
  const std::vector<TierPair> pairs = tier_pairs(*one_host);
  const std::vector<TierResult> results = {{pairs[0], 22, AlphaBetaFit{2e-6, 0.1e-9, 0.02, 22}},
                                           {pairs[1], 0, std::nullopt}};
  EXPECT_TRUE(calibrated_file(*one_host, results, false).tiers.empty());
  EXPECT_EQ(calibrated_file(*one_host, results, true).tiers.size(), 1u);  // declared by a file: kept
}

}  // namespace
}  // namespace dc::calibrate
