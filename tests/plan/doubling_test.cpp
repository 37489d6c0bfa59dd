// The recursive-doubling all-reduce: every rank gets bitwise the same bytes where the order of an
// op's operands matters (min and max of signed zeros, NaN payloads), a call is log2(n) exchanges
// deep (two more where n is not a power of two), and it applies only to small all-reduces.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/reduce.h"
#include "src/plan/cost_model.h"
#include "src/plan/generators.h"
#include "src/plan/select.h"
#include "tests/plan/plan_check.h"

namespace dc {
namespace {

PlanRequest doubling_request(int n, uint64_t count, bool in_place = false) {
  PlanRequest q;
  q.collective = dcCollAllReduce;
  q.nranks = n;
  q.count = count;
  q.elem_size = 4;
  q.in_place = in_place;
  q.cluster = ClusterView::one_host(n, false);
  q.algorithms = AlgorithmFilter::only("doubling");
  return q;
}

TEST(DoublingAllReduce, EveryRankGetsTheSameBytesWhereOperandOrderMatters) {
  for (int n = 2; n <= 9; ++n) {
    for (dcRedOp_t op : {dcMin, dcMax}) {
      for (bool in_place : {false, true}) {
        const PlanRequest q = doubling_request(n, 24, in_place);
        SCOPED_TRACE("n=" + std::to_string(n) + " op=" + std::to_string(op) + " in_place=" + std::to_string(in_place));
        ASSERT_EQ(make_plans(q).front().algorithm, "doubling");
        std::string error;
        const auto outputs = run_on_operand_order_inputs(q, op, &error);
        ASSERT_EQ(error, "");
        for (uint64_t i = 0; i < q.count; ++i)
          EXPECT_TRUE(outputs[0][i] == 0.0f || std::isnan(outputs[0][i])) << "element " << i;
        for (int r = 1; r < n; ++r)
          EXPECT_EQ(std::memcmp(outputs[0].data(), outputs[r].data(), q.count * sizeof(float)), 0)
              << "rank " << r << " differs bitwise from rank 0";
      }
    }
  }
}

TEST(DoublingAllReduce, SumsLikeEveryOtherPlan) {
  for (int n = 2; n <= 12; ++n)
    for (uint64_t count : {uint64_t{1}, uint64_t{5}, uint64_t{97}})
      for (TypeOp to : {TypeOp{dcFloat32, dcSum}, TypeOp{dcInt32, dcMax}, TypeOp{dcFloat64, dcAvg}}) {
        PlanRequest q = doubling_request(n, count, count == 5);
        q.elem_size = datatype_size(to.type);
        q.chunk_bytes = count == 97 ? 64 : 1 << 20;  // several chunks, each through every round
        simulate_and_check(q, to, 7);
        if (testing::Test::HasFatalFailure()) return;
      }
}

TEST(DoublingAllReduce, IsLog2NExchangesDeep) {
  for (int n = 2; n <= 16; ++n) {
    const PlanRequest q = doubling_request(n, 16);
    int rounds = 0;
    while ((2 << rounds) <= n) ++rounds;
    const bool folds = n != (1 << rounds);
    // One host, one α per message: the longest chain of messages through the plans.
    const double alpha = q.cluster->intra_host().latency_s;
    const Traffic plans = materialized_traffic(make_plans(q), q);
    EXPECT_NEAR(plans.latency_seconds(), (rounds + (folds ? 2 : 0)) * alpha, 1e-12) << "n=" << n;
    // Each taking part sends once a round; a folded pair adds one message each way.
    const int rem = n - (1 << rounds);
    const double messages = (1 << rounds) * rounds + 2 * rem;
    double ends = 0;
    for (const auto& [host, count] : plans.host_message_ends()) ends += count;
    EXPECT_EQ(ends, 2 * messages) << "n=" << n;
    std::vector<int> everyone(n);
    for (int r = 0; r < n; ++r) everyone[r] = r;
    EXPECT_NEAR(doubling_allreduce_traffic(q, everyone).latency_seconds(), plans.latency_seconds(), 1e-12);
  }
}

TEST(DoublingAllReduce, AppliesToSmallAllReducesOnly) {
  const Generator* doubling = find_generator(dcCollAllReduce, "doubling");
  ASSERT_NE(doubling, nullptr);
  const std::vector<int> everyone = {0, 1, 2, 3};
  EXPECT_TRUE(doubling->applicable(doubling_request(4, kDoublingMaxBytes / 4), everyone));
  EXPECT_FALSE(doubling->applicable(doubling_request(4, kDoublingMaxBytes / 4 + 1), everyone));
  // Forced past its size, the selector falls back to what applies.
  EXPECT_NE(price_candidates(doubling_request(4, 1 << 20)).front().generator->name, std::string("doubling"));
  EXPECT_EQ(price_candidates(doubling_request(4, 16)).front().generator->name, std::string("doubling"));
}

}  // namespace
}  // namespace dc
