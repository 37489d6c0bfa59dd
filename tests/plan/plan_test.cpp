// Plans as data: results simulated against a float64 reference, invariants, hazards and golden JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include "base/error.h"
#include "kernels/reduce.h"
#include "src/plan/plan.h"
#include "tests/plan/plan_check.h"
#include "tests/plan/plan_invariants.h"
#include "tests/plan/plan_sim.h"

namespace dc {
namespace {

const std::vector<int> kRankCounts = {1, 2, 3, 4, 5, 8};
const std::vector<uint64_t> kCounts = {0, 1, 7, 13, 1031};

// One host over sockets and over shared memory, every even split over several hosts, and one
// uneven split (the last host takes one rank more; a rank alone on the first host at n = 3).
std::vector<std::shared_ptr<const ClusterView>> clusters_for(int n) {
  std::vector<std::shared_ptr<const ClusterView>> clusters = {ClusterView::one_host(n, false),
                                                              ClusterView::one_host(n, true)};
  for (int hosts = 2; hosts < n; ++hosts)
    if (n % hosts == 0) clusters.push_back(ClusterView::blocks(hosts, n / hosts, true));
  if (n >= 3) clusters.push_back(ClusterView::layout({n / 2, n - n / 2}, true));
  return clusters;
}

std::vector<int> roots_for(int n) {
  if (n == 1) return {0};
  return {0, n - 1, 1};
}

void sweep(dcCollective_t collective, const std::vector<TypeOp>& types, const std::vector<std::string>& algorithms) {
  uint64_t seed = 1;
  const bool rooted = is_rooted(collective);
  for (int n : kRankCounts) {
    for (uint64_t count : kCounts) {
      for (bool in_place : {false, true}) {
        for (const TypeOp& to : types) {
          for (const std::string& algorithm : algorithms) {
            for (int root : rooted ? roots_for(n) : std::vector<int>{-1}) {
              PlanRequest q;
              q.collective = collective;
              q.nranks = n;
              q.root = root;
              q.count = count;
              q.elem_size = datatype_size(to.type);
              q.in_place = in_place;
              q.algorithms = algorithm.empty() ? AlgorithmFilter{} : AlgorithmFilter::only(algorithm);
              q.chunk_bytes = 16;
              for (const auto& cluster : clusters_for(n)) {
                q.cluster = cluster;
                simulate_and_check(q, to, seed++);
                if (testing::Test::HasFatalFailure()) return;
              }
              if (count == 1031 && n == 5) {
                q.chunk_bytes = 1 << 20;
                simulate_and_check(q, to, seed++);
                if (testing::Test::HasFatalFailure()) return;
              }
            }
          }
        }
      }
    }
  }
}

const std::vector<TypeOp> kReductionTypes = {{dcFloat32, dcSum}, {dcInt32, dcMax}, {dcFloat64, dcAvg}};
const std::vector<TypeOp> kMovementTypes = {{dcFloat32, dcSum}, {dcFloat64, dcSum}};

TEST(PlanSimulation, AllReduceEveryAlgorithmAndChosen) {
  sweep(dcCollAllReduce, kReductionTypes, {"ring", "tree", "doubling", "dbtree", "direct", "hierarchical", ""});
}
TEST(PlanSimulation, Reduce) { sweep(dcCollReduce, kReductionTypes, {"", "hierarchical"}); }
TEST(PlanSimulation, ReduceScatter) { sweep(dcCollReduceScatter, kReductionTypes, {"", "hierarchical"}); }
TEST(PlanSimulation, Broadcast) { sweep(dcCollBroadcast, kMovementTypes, {"", "hierarchical"}); }
TEST(PlanSimulation, AllGather) { sweep(dcCollAllGather, kMovementTypes, {"", "hierarchical"}); }
TEST(PlanSimulation, AlltoAll) { sweep(dcCollAlltoAll, kMovementTypes, {""}); }
TEST(PlanSimulation, Gather) { sweep(dcCollGather, kMovementTypes, {""}); }
TEST(PlanSimulation, Scatter) { sweep(dcCollScatter, kMovementTypes, {""}); }

TEST(PlanSimulation, SendRecv) {
  // Rank 0 sends to rank 2; rank 1 takes part in nothing (an empty send).
  for (uint64_t count : {uint64_t{1}, uint64_t{1031}}) {
    PlanRequest q;
    q.nranks = 3;
    q.count = count;
    q.collective = dcCollSend;
    q.rank = 0;
    q.root = 2;
    std::vector<Plan> plans = {make_plan(q)};
    q.rank = 1;
    q.count = 0;
    q.root = 0;
    plans.push_back(make_plan(q));
    q.collective = dcCollRecv;
    q.rank = 2;
    q.count = count;
    plans.push_back(make_plan(q));
    ASSERT_EQ(plans[0].steps.size(), 1u);
    ASSERT_EQ(plans[2].steps.size(), 1u);
    ASSERT_EQ(sim::check_invariants(plans), "");

    std::vector<sim::RankMemory> memories;
    for (const Plan& p : plans) memories.push_back(sim::allocate(p, 4));
    for (uint64_t i = 0; i < count; ++i) {
      store(dcFloat32, sim::address(memories[0], {BufId::Input, i}, 4), input_value(dcFloat32, 0, i));
    }
    ASSERT_EQ(sim::run(plans, memories, dcFloat32, dcSum, 7), "");
    for (uint64_t i = 0; i < count; ++i) {
      ASSERT_EQ(load(dcFloat32, sim::address(memories[2], {BufId::Output, i}, 4)), input_value(dcFloat32, 0, i));
    }
  }
}

Plan hand_plan(int rank, int nranks, uint64_t count) {
  Plan p;
  p.rank = rank;
  p.nranks = nranks;
  p.count = count;
  p.sizes = {count, count, 0};
  return p;
}

TEST(PlanSimulation, DetectsDeadlockUnmatchedMessagesAndRaces) {
  // Each rank receives before it sends, and each send waits for the receive: a cycle.
  std::vector<Plan> plans = {hand_plan(0, 2, 4), hand_plan(1, 2, 4)};
  for (int r = 0; r < 2; ++r) {
    Step in;
    in.kind = StepKind::Recv;
    in.peer = 1 - r;
    in.tag = static_cast<uint32_t>(r);
    in.count = 4;
    in.dst = {BufId::Output, 0};
    const uint32_t got = plans[r].add(in);
    Step out = in;
    out.kind = StepKind::Send;
    out.tag = static_cast<uint32_t>(1 - r);
    out.src = {BufId::Output, 0};
    plans[r].add(out, {got});
  }
  ASSERT_EQ(sim::check_invariants(plans), "");
  std::vector<sim::RankMemory> memories;
  for (const Plan& plan : plans) memories.push_back(sim::allocate(plan, 4));
  EXPECT_NE(sim::run(plans, memories, dcFloat32, dcSum, 3).find("deadlock"), std::string::npos);

  PlanRequest q;
  q.nranks = 2;
  q.count = 4;
  plans = make_plans(q);
  plans[1].steps[0].tag += 100;
  EXPECT_NE(sim::check_invariants(plans), "");

  // An in-place ring all-reduce whose all-gather receives lose their dependencies overwrites
  // data that a reduce-scatter send still reads.
  q.nranks = 3;
  q.count = 6;
  q.in_place = true;
  q.algorithms = AlgorithmFilter::only("ring");
  plans = make_plans(q);
  ASSERT_EQ(sim::check_hazards(plans, 4), "");
  for (Step& s : plans[0].steps) {
    if (s.kind == StepKind::Recv) s.dep_count = 0;
  }
  EXPECT_NE(sim::check_hazards(plans, 4), "");
}

TEST(PlanShape, CountZeroAndSingleRank) {
  for (int c = dcCollAllReduce; c < dcNumCollectives; ++c) {
    PlanRequest q;
    q.collective = static_cast<dcCollective_t>(c);
    q.nranks = 4;
    q.rank = 1;
    q.root = 2;
    q.count = 0;
    EXPECT_TRUE(make_plan(q).steps.empty()) << collective_name(q.collective);
    if (q.collective == dcCollSend || q.collective == dcCollRecv) continue;
    q.nranks = 1;
    q.rank = 0;
    q.root = 0;
    q.count = 9;
    Plan plan = make_plan(q);
    ASSERT_EQ(plan.steps.size(), 1u) << collective_name(q.collective);
    EXPECT_EQ(plan.steps[0].kind, StepKind::Copy);
    EXPECT_EQ(plan.steps[0].count, 9u);
    q.in_place = true;
    EXPECT_TRUE(make_plan(q).steps.empty()) << collective_name(q.collective);
  }
}

TEST(PlanShape, FinalizeBeforeReducedDataLeaves) {
  // Ring all-reduce: every all-gather send of the owned segment follows its Finalize.
  PlanRequest q;
  q.nranks = 4;
  q.count = 16;
  q.algorithms = AlgorithmFilter::only("ring");
  q.chunk_bytes = 8;
  const Plan plan = make_plan(q);
  size_t finalizes = 0;
  for (const Step& s : plan.steps) finalizes += s.kind == StepKind::Finalize;
  EXPECT_EQ(finalizes, 2u);  // owned segment of 4 elements in chunks of 2
  q.collective = dcCollReduceScatter;
  finalizes = 0;
  for (const Step& s : make_plan(q).steps) finalizes += s.kind == StepKind::Finalize;
  EXPECT_EQ(finalizes, 8u);  // the whole block of 16 in chunks of 2
}

TEST(PlanErrors, ImpossibleRequestsThrowInvalidArgument) {
  auto code_of = [](PlanRequest q) {
    try {
      make_plan(q);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()), "");
      return e.code();
    }
    return dcSuccess;
  };
  PlanRequest q;
  q.nranks = 4;
  q.count = 8;
  PlanRequest bad = q;
  bad.nranks = 0;
  EXPECT_EQ(code_of(bad), dcInvalidArgument);
  bad = q;
  bad.rank = 4;
  EXPECT_EQ(code_of(bad), dcInvalidArgument);
  bad = q;
  bad.rank = -1;
  EXPECT_EQ(code_of(bad), dcInvalidArgument);
  for (dcCollective_t c : {dcCollBroadcast, dcCollReduce, dcCollGather, dcCollScatter, dcCollSend, dcCollRecv}) {
    bad = q;
    bad.collective = c;
    bad.root = 4;
    EXPECT_EQ(code_of(bad), dcInvalidArgument) << collective_name(c);
    bad.root = -1;
    EXPECT_EQ(code_of(bad), dcInvalidArgument) << collective_name(c);
    bad.root = 3;
    EXPECT_EQ(code_of(bad), dcSuccess) << collective_name(c);
  }
  bad = q;
  bad.cluster = ClusterView::one_host(3, true);  // a view of other ranks than the request's
  EXPECT_EQ(code_of(bad), dcInvalidArgument);
  bad = q;
  bad.collective = static_cast<dcCollective_t>(42);
  EXPECT_EQ(code_of(bad), dcInvalidArgument);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Compares against tests/plan/golden/<name>.json; DEEPCOMM_UPDATE_GOLDEN=1 rewrites the file.
void expect_golden(const std::string& name, const PlanRequest& q) {
  const std::string json = plan_to_json(make_plan(q)) + "\n";
  const std::string path = std::string(DC_PLAN_GOLDEN_DIR) + "/" + name + ".json";
  if (const char* update = std::getenv("DEEPCOMM_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(path) << json;
  }
  EXPECT_EQ(json, read_text(path)) << path;
  std::istringstream in(json);
  boost::property_tree::ptree tree;
  ASSERT_NO_THROW(boost::property_tree::read_json(in, tree)) << json;
  EXPECT_EQ(tree.get<std::string>("collective"), collective_name(q.collective));
  EXPECT_EQ(tree.get_child("steps").size(), make_plan(q).steps.size());
}

TEST(PlanJson, Golden) {
  PlanRequest q;
  q.nranks = 3;
  q.count = 6;
  q.algorithms = AlgorithmFilter::only("ring");
  q.rank = 0;
  expect_golden("ring_allreduce_n3_c6_r0", q);
  q.rank = 1;
  q.in_place = true;
  expect_golden("ring_allreduce_n3_c6_r1_in_place", q);
  q = {};
  q.nranks = 4;
  q.count = 4;
  q.algorithms = AlgorithmFilter::only("tree");
  q.rank = 0;
  expect_golden("tree_allreduce_n4_c4_r0", q);
  q.rank = 3;
  expect_golden("tree_allreduce_n4_c4_r3", q);
  q = {};
  q.collective = dcCollBroadcast;
  q.nranks = 3;
  q.root = 1;
  q.rank = 2;
  q.count = 5;
  q.chunk_bytes = 8;
  expect_golden("pipeline_broadcast_n3_root1_r2_chunked", q);
  // A composed plan: 2 hosts x 2 ranks, intra-host direct halves around a cross-host ring.
  q = {};
  q.nranks = 4;
  q.rank = 1;
  q.count = 4;
  q.cluster = ClusterView::blocks(2, 2, true);
  q.algorithms = AlgorithmFilter::only("hierarchical");
  expect_golden("hierarchical_allreduce_2x2_c4_r1", q);
}

}  // namespace
}  // namespace dc
