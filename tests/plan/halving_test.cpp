// The recursive halving and doubling all-reduce: it reduces like every other plan (uneven halves,
// several chunks a half, in place, avg's finalize), every rank gets bitwise the same bytes, a call
// is 2 log2(n) exchanges deep, and it applies where it was measured to pay only (larger vectors
// where the transport receives in place).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/reduce.h"
#include "src/plan/cost_model.h"
#include "src/plan/generators.h"
#include "src/plan/select.h"
#include "tests/plan/plan_check.h"
#include "tests/plan/plan_invariants.h"
#include "topology/cluster_view.h"

namespace dc {
namespace {

// The smallest count of `elem`-byte elements the plan applies to at n ranks.
uint64_t floor_count(int n, size_t elem) { return n * kHalvingMinSegmentBytes / elem; }

PlanRequest halving_request(int n, uint64_t count, size_t elem = 4, bool in_place = false) {
  PlanRequest q;
  q.collective = dcCollAllReduce;
  q.nranks = n;
  q.count = count;
  q.elem_size = elem;
  q.in_place = in_place;
  q.cluster = ClusterView::one_host(n, false);  // ranks that talk over sockets
  q.algorithms = AlgorithmFilter::only("halving");
  return q;
}

std::vector<int> everyone(int n) {
  std::vector<int> members(n);
  for (int r = 0; r < n; ++r) members[r] = r;
  return members;
}

TEST(HalvingAllReduce, SumsLikeEveryOtherPlan) {
  for (int n : {2, 4, 8})
    for (TypeOp to : {TypeOp{dcFloat32, dcSum}, TypeOp{dcInt32, dcMax}, TypeOp{dcFloat64, dcAvg}}) {
      const size_t elem = datatype_size(to.type);
      // At the floor, and past it by an odd count (halves differ by an element in every round).
      for (uint64_t count : {floor_count(n, elem), floor_count(n, elem) + 7}) {
        for (bool in_place : {false, true}) {
          PlanRequest q = halving_request(n, count, elem, in_place);
          q.chunk_bytes = 24 * 1024;  // several chunks a half, not a divisor of any half
          SCOPED_TRACE("n=" + std::to_string(n) + " count=" + std::to_string(count) +
                       " in_place=" + std::to_string(in_place));
          ASSERT_EQ(make_plans(q).front().algorithm, "halving");
          simulate_and_check(q, to, 11);
          if (testing::Test::HasFatalFailure()) return;
        }
      }
    }
}

// No step reads or writes memory that another step may touch at the same time (above 13 elements
// simulate_and_check leaves this out; the plans here have few steps at any count).
TEST(HalvingAllReduce, HasNoHazards) {
  for (int n : {2, 4, 8})
    for (bool in_place : {false, true})
      for (uint64_t chunk_bytes : {uint64_t{24 * 1024}, uint64_t{1} << 20}) {
        PlanRequest q = halving_request(n, floor_count(n, 4) + 7, 4, in_place);
        q.chunk_bytes = chunk_bytes;
        SCOPED_TRACE("n=" + std::to_string(n) + " in_place=" + std::to_string(in_place) +
                     " chunk_bytes=" + std::to_string(chunk_bytes));
        EXPECT_EQ(sim::check_hazards(make_plans(q), q.elem_size), "");
      }
}

TEST(HalvingAllReduce, EveryRankGetsTheSameBytes) {
  for (int n : {2, 4, 8}) {
    for (dcRedOp_t op : {dcMin, dcMax}) {
      const PlanRequest q = halving_request(n, floor_count(n, 4) + 3);
      SCOPED_TRACE("n=" + std::to_string(n) + " op=" + std::to_string(op));
      ASSERT_EQ(make_plans(q).front().algorithm, "halving");
      std::string error;
      const auto outputs = run_on_operand_order_inputs(q, op, &error);
      ASSERT_EQ(error, "");
      for (int r = 1; r < n; ++r)
        EXPECT_EQ(std::memcmp(outputs[0].data(), outputs[r].data(), q.count * sizeof(float)), 0)
            << "rank " << r << " differs bitwise from rank 0";
    }
  }
}

TEST(HalvingAllReduce, IsTwoLog2NExchangesDeep) {
  for (int n : {2, 4, 8, 16}) {
    int rounds = 0;
    while ((1 << rounds) < n) ++rounds;
    const PlanRequest q = halving_request(n, floor_count(n, 4));  // one chunk a half (1 MiB chunks)
    const double alpha = q.cluster->intra_host().latency_s;
    const Traffic plans = materialized_traffic(make_plans(q), q);
    EXPECT_NEAR(plans.latency_seconds(), 2 * rounds * alpha, 1e-12) << "n=" << n;
    // Every member sends one message a round, in each half.
    double ends = 0;
    for (const auto& [host, count] : plans.host_message_ends()) ends += count;
    EXPECT_EQ(ends, 2.0 * n * 2 * rounds) << "n=" << n;
    const Traffic formula = halving_allreduce_traffic(q, everyone(n));
    EXPECT_NEAR(formula.latency_seconds(), plans.latency_seconds(), 1e-12) << "n=" << n;
    double formula_ends = 0;
    for (const auto& [host, count] : formula.host_message_ends()) formula_ends += count;
    EXPECT_EQ(formula_ends, ends) << "n=" << n;
  }
}

TEST(HalvingAllReduce, AppliesWhereItWasMeasuredToPay) {
  const Generator* halving = find_generator(dcCollAllReduce, "halving");
  ASSERT_NE(halving, nullptr);
  EXPECT_TRUE(halving->applicable(halving_request(4, floor_count(4, 4)), everyone(4)));
  EXPECT_FALSE(halving->applicable(halving_request(4, floor_count(4, 4) - 1), everyone(4)));
  EXPECT_TRUE(halving->applicable(halving_request(4, 4 * kHalvingMaxSegmentBytes / 4), everyone(4)));
  EXPECT_FALSE(halving->applicable(halving_request(4, 4 * kHalvingMaxSegmentBytes / 4 + 1), everyone(4)));
  EXPECT_FALSE(halving->applicable(halving_request(6, floor_count(8, 4)), everyone(6)));  // not 2^k
  PlanRequest shared = halving_request(4, floor_count(4, 4));
  shared.cluster = ClusterView::one_host(4, true);  // DeepComm's shared memory: not measured there
  EXPECT_FALSE(halving->applicable(shared, everyone(4)));
  PlanRequest hosts = halving_request(4, floor_count(4, 4));
  hosts.cluster = ClusterView::blocks(2, 2, false);  // between hosts: not measured there
  EXPECT_FALSE(halving->applicable(hosts, everyone(4)));
  // Where it applies over sockets, the cost model takes it over the ring (the same bytes, fewer
  // hops); below its floor the ring or the tree.
  for (int n : {4, 8}) {
    PlanRequest any = halving_request(n, floor_count(n, 4));
    any.algorithms = AlgorithmFilter();
    EXPECT_EQ(price_candidates(any).front().generator->name, std::string("halving")) << "n=" << n;
    any.count = floor_count(n, 4) / 2;
    EXPECT_NE(price_candidates(any).front().generator->name, std::string("halving")) << "n=" << n;
    any.count = n * kHalvingMaxSegmentBytes / 4 + 1;
    EXPECT_EQ(price_candidates(any).front().generator->name, std::string("ring")) << "n=" << n;
  }
}

// A view of n ranks on one host that reach each other over UCX receiving in place.
std::shared_ptr<const ClusterView> receiving_in_place(int n, bool shared_memory = false) {
  ClusterInputs in;
  in.host_ids.assign(n, "host");
  in.shared_memory = shared_memory;
  in.receives_in_place = true;
  return ClusterView::build(in);
}

TEST(HalvingAllReduce, AppliesToLargeVectorsWhereTheTransportReceivesInPlace) {
  const Generator* halving = find_generator(dcCollAllReduce, "halving");
  ASSERT_NE(halving, nullptr);
  for (int n : {4, 8}) {
    PlanRequest q = halving_request(n, kHalvingMaxBytesInPlace / 4);
    q.cluster = receiving_in_place(n);
    EXPECT_TRUE(halving->applicable(q, everyone(n))) << "n=" << n;
    q.count = kHalvingMaxBytesInPlace / 4 + 1;
    EXPECT_FALSE(halving->applicable(q, everyone(n))) << "n=" << n;  // beyond what was measured
    q.count = floor_count(n, 4) - 1;
    EXPECT_FALSE(halving->applicable(q, everyone(n))) << "n=" << n;  // the floor stays
    // The cost model takes it over the ring there (8 MiB at n ranks), the sockets' view does not offer it.
    PlanRequest any = halving_request(n, (8 << 20) / 4);
    any.algorithms = AlgorithmFilter();
    any.cluster = receiving_in_place(n);
    EXPECT_EQ(price_candidates(any).front().generator->name, std::string("halving")) << "n=" << n;
    any.cluster = ClusterView::one_host(n, false);
    EXPECT_EQ(price_candidates(any).front().generator->name, std::string("ring")) << "n=" << n;
  }
  // Ranks that share memory never receive through a transport: the view drops the flag.
  EXPECT_FALSE(receiving_in_place(4, true)->receives_in_place());
  EXPECT_TRUE(receiving_in_place(4)->receives_in_place());
  // A child communicator keeps it, and the cache key tells the two views apart.
  EXPECT_TRUE(receiving_in_place(4)->subset({0, 2})->receives_in_place());
  EXPECT_NE(receiving_in_place(4)->hash(), ClusterView::one_host(4, false)->hash());
}

}  // namespace
}  // namespace dc
