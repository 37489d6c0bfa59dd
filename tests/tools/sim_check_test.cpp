// deepcomm-sim --check on small clusters: every all-reduce algorithm's analytical price (what the
// tool uses at scale), less the trees' pipeline fill, against the price of its materialized plans,
// 4 KiB to 16 MiB. The tolerances are what the model achieves today, stated per algorithm:
//   dbtree, tree  within 5%: their formulas walk the plans' chains of messages.
//   doubling      within 5%: its formula walks the plans' chain of exchanges.
//   ring          0.95x to 1.5x: the formula paces every step by the slowest edge; the plans let
//                 steps over faster edges run ahead (as tests/plan/cluster_plans_test.cpp says).
//   hierarchical  within 25% (within 8% except with 4 ranks per host on one network tier, where the
//                 formula is up to 24% cheaper at 1-16 MiB and 21% dearer at 4 KiB).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "base/error.h"
#include "tools/common/file_cluster.h"
#include "tools/sim/sim_rows.h"

namespace dc::tools {
namespace {

struct Bounds {
  double low, high;
};
const std::map<std::string, Bounds> kBounds = {{"dbtree", {0.95, 1.05}},
                                               {"ring", {0.95, 1.5}},
                                               {"hierarchical", {0.75, 1.25}},
                                               {"tree", {0.95, 1.05}},
                                               {"doubling", {0.95, 1.05}}};

void expect_agreement(const std::shared_ptr<const ClusterView>& cluster) {
  SCOPED_TRACE(cluster->describe());
  SimOptions options;
  options.min_bytes = 4 << 10;
  options.max_bytes = 16 << 20;
  options.factor = 16;
  options.check = true;
  std::map<std::string, int> seen;
  for (const SimRow& row : simulate(cluster, options)) {
    ASSERT_TRUE(row.materialized_seconds);
    // The plans are priced without the trees' pipeline fill (hierarchical ends with a tree at some
    // sizes); the ring has none.
    EXPECT_GE(row.fill_seconds, 0.0) << row.algorithm << " at " << row.bytes << " bytes";
    if (std::string(row.algorithm) == "ring") EXPECT_EQ(row.fill_seconds, 0.0);
    const double ratio = (row.seconds - row.fill_seconds) / *row.materialized_seconds;
    const auto bounds = kBounds.find(row.algorithm);
    ASSERT_NE(bounds, kBounds.end()) << "no tolerance stated for " << row.algorithm;
    EXPECT_GE(ratio, bounds->second.low) << row.algorithm << " at " << row.bytes << " bytes";
    EXPECT_LE(ratio, bounds->second.high) << row.algorithm << " at " << row.bytes << " bytes";
    ++seen[row.algorithm];
  }
  // Every algorithm priced at each of the 4 sizes (hierarchical needs a host with several ranks).
  EXPECT_EQ(seen["ring"], 4);
  EXPECT_EQ(seen["tree"], 4);
  EXPECT_EQ(seen["dbtree"], 4);
  EXPECT_EQ(seen["hierarchical"], 4);
  EXPECT_EQ(seen["doubling"], 1);  // 4 KiB: it applies up to kDoublingMaxBytes
}

TEST(SimCheck, TwoHostsOfFour) { expect_agreement(simulated_cluster({2, 4, true, {}})); }

TEST(SimCheck, FourHostsOfTwo) { expect_agreement(simulated_cluster({4, 2, true, {}})); }

TEST(SimCheck, ThreeUnevenHosts) { expect_agreement(ClusterView::layout({3, 1, 2}, true)); }

TEST(SimCheck, TwoTierFile) {
  // 8 hosts in two InfiniBand islands joined by Ethernet, two rails each, 2 ranks per host.
  Layout layout{0, 2, true, topo::load_topology_file(DC_TWO_TIER_FILE)};
  const auto cluster = simulated_cluster(layout);
  ASSERT_EQ(cluster->nhosts(), 8);
  ASSERT_EQ(cluster->ngroups(), 2);
  expect_agreement(cluster);
}

TEST(SimCheck, RefusesToMaterializeLargeClusters) {
  SimOptions options;
  options.check = true;
  EXPECT_THROW(simulate(simulated_cluster({16, 8, true, {}}), options), Error);
}

}  // namespace
}  // namespace dc::tools
