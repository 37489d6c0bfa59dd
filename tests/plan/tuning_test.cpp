// Tuning rules: the selector follows the first rule that matches a call and that names one of the
// call's candidates; the rules' names are checked against the registry; the cluster view carries
// the rules into children, dumps and its digest.
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "compression/form/spec.h"
#include "src/plan/algorithm_filter.h"
#include "src/plan/select.h"
#include "src/plan/tuning.h"
#include "topology/cluster_view.h"

namespace dc {
namespace {

topo::TuningRule rule(const std::string& collective, const std::string& algorithm, uint64_t min_bytes,
                      uint64_t max_bytes, int hosts = 0, int ranks = 0) {
  return topo::TuningRule{collective, algorithm, min_bytes, max_bytes, hosts, ranks, /*line=*/7};
}

topo::TopologyFile file_with(std::vector<topo::TuningRule> rules) {
  topo::TopologyFile file;
  file.source = "t.json";
  file.tiers.push_back(topo::Tier{"eth", 1, 50, false, std::nullopt, {}, 2});
  file.tuning = std::move(rules);
  return file;
}

PlanRequest all_reduce(const topo::TopologyFile& file, uint64_t bytes, int hosts = 4, int ranks_per_host = 2) {
  PlanRequest q;
  q.collective = dcCollAllReduce;
  q.cluster = ClusterView::blocks(hosts, ranks_per_host, true, &file);
  q.nranks = q.cluster->nranks();
  q.count = bytes / 4;
  q.elem_size = 4;
  return q;
}

std::string first(const PlanRequest& q) { return price_candidates(q).front().generator->name; }

// The model's own choice at 64 MiB on 4 x 2 over 1 Gbit/s is not the ring (the premise of the
// rules below that name the ring).
TEST(Tuning, ARulePutsItsAlgorithmFirst) {
  const topo::TopologyFile plain = file_with({});
  const std::string model = first(all_reduce(plain, 64 << 20));
  ASSERT_NE(model, "ring");
  const topo::TopologyFile tuned = file_with({rule("allreduce", "ring", 1 << 20, 128 << 20)});
  const auto priced = price_candidates(all_reduce(tuned, 64 << 20));
  EXPECT_STREQ(priced.front().generator->name, "ring");
  EXPECT_TRUE(priced.front().tuned);
  // The others keep the model's order and price; the model's choice is the runner-up.
  EXPECT_EQ(std::string(priced[1].generator->name), model);
  EXPECT_FALSE(priced[1].tuned);
  EXPECT_EQ(make_plan(all_reduce(tuned, 64 << 20)).algorithm, "ring");
  EXPECT_FALSE(price_candidates(all_reduce(plain, 64 << 20)).front().tuned);
}

TEST(Tuning, ARuleAppliesOnlyInsideItsScope) {
  const topo::TopologyFile file = file_with({rule("allreduce", "ring", 1 << 20, 64 << 20, 4, 8)});
  const std::string model = first(all_reduce(file_with({}), 128 << 20));
  ASSERT_NE(model, "ring");
  auto tuned = [](const PlanRequest& q) { return price_candidates(q).front().tuned; };
  EXPECT_EQ(first(all_reduce(file, 1 << 20)), "ring");  // both ends are inside
  EXPECT_EQ(first(all_reduce(file, 64 << 20)), "ring");
  EXPECT_TRUE(tuned(all_reduce(file, 1 << 20)));
  EXPECT_EQ(first(all_reduce(file, 128 << 20)), model);  // past max_bytes
  EXPECT_FALSE(tuned(all_reduce(file, 128 << 20)));
  EXPECT_FALSE(tuned(all_reduce(file, (1 << 20) - 4)));  // below min_bytes
  EXPECT_FALSE(tuned(all_reduce(file, 4 << 20, 2, 4)));  // 2 hosts, not 4
  EXPECT_FALSE(tuned(all_reduce(file, 4 << 20, 4, 1)));  // 4 ranks, not 8
  PlanRequest gather = all_reduce(file, 4 << 20);
  gather.collective = dcCollAllGather;
  EXPECT_FALSE(tuned(gather));  // another collective
  PlanRequest compressed = all_reduce(file, 4 << 20);
  compressed.compression = compression::parse_spec("q8,ef");
  EXPECT_FALSE(tuned(compressed));  // compressed calls are not tuned
}

TEST(Tuning, TheFirstRuleWithACandidateDecides) {
  const topo::TopologyFile file =
      file_with({rule("allreduce", "dbtree", 0, 1 << 30), rule("allreduce", "ring", 0, 1 << 30),
                 rule("allreduce", "tree", 0, 1 << 30)});
  EXPECT_EQ(first(all_reduce(file, 64 << 10)), "dbtree");
  // DEEPCOMM_ALGO leaves the double binary tree out: its rule is passed over.
  PlanRequest q = all_reduce(file, 64 << 10);
  q.algorithms = AlgorithmFilter::parse_deepcomm("ring,tree,hierarchical");
  EXPECT_EQ(first(q), "ring");
  // A fixed algorithm stays fixed whatever the rules say.
  q.algorithms = AlgorithmFilter::parse_deepcomm("hierarchical");
  EXPECT_EQ(first(q), "hierarchical");
  EXPECT_FALSE(price_candidates(q).front().tuned);
}

TEST(Tuning, NamesAreCheckedAgainstTheRegistry) {
  EXPECT_NO_THROW(check_tuning_rules(file_with({rule("allreduce", "tree", 0, 8), rule("alltoall", "pairwise", 0, 8)})));
  auto message = [](const topo::TopologyFile& file) {
    try {
      check_tuning_rules(file);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), dcInvalidArgument);
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message(file_with({rule("allreduce", "tree", 0, 8), rule("all_reduce", "tree", 0, 8)})),
            "topology file t.json:7: tuning[1].collective: unknown collective \"all_reduce\" (expected allreduce, "
            "allgather, reducescatter, broadcast, reduce, alltoall, gather or scatter)");
  const std::string wrong = message(file_with({rule("allreduce", "pairwise", 0, 8)}));
  EXPECT_EQ(wrong.rfind("topology file t.json:7: tuning[0].algorithm: allreduce has no algorithm \"pairwise\" "
                        "(expected one of ring, ",
                        0),
            0u)
      << wrong;
  EXPECT_NE(wrong.find("hierarchical"), std::string::npos) << wrong;
  EXPECT_EQ(wrong.find("twophase"), std::string::npos) << wrong;  // compressed plans are not tuned
}

TEST(Tuning, TheViewCarriesItsRules) {
  const topo::TopologyFile plain = file_with({});
  const topo::TopologyFile file = file_with({rule("allreduce", "ring", 0, 1 << 30, 2)});
  const auto view = ClusterView::blocks(4, 2, true, &file);
  EXPECT_NE(view->hash(), ClusterView::blocks(4, 2, true, &plain)->hash());  // plans cached apart
  ASSERT_EQ(view->tuning().size(), 1u);
  // A child on two of the hosts: the rule's host count now matches.
  const auto child = view->subset({0, 1, 2, 3});
  ASSERT_EQ(child->tuning().size(), 1u);
  PlanRequest q = all_reduce(file, 64 << 20);
  q.cluster = child;
  q.nranks = 4;
  EXPECT_EQ(first(q), "ring");
  const topo::TopologyFile dumped = topo::topology_file_of(*view);
  ASSERT_EQ(dumped.tuning.size(), 1u);
  EXPECT_EQ(dumped.tuning[0].algorithm, "ring");
  EXPECT_EQ(dumped.tuning[0].hosts, 2);
}

}  // namespace
}  // namespace dc
