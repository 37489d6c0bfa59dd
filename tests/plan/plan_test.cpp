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

#include "src/base/error.h"
#include "src/kernels/reduce.h"
#include "src/plan/plan.h"
#include "tests/plan/plan_invariants.h"
#include "tests/plan/plan_sim.h"

namespace dc {
namespace {

struct TypeOp {
  dcDataType_t type;
  dcRedOp_t op;
};

const std::vector<int> kRankCounts = {1, 2, 3, 4, 5, 8};
const std::vector<uint64_t> kCounts = {0, 1, 7, 13, 1031};

// Inputs are small multiples of 1/2, so float sums of up to 8 of them are exact.
double input_value(dcDataType_t type, int rank, uint64_t i) {
  const int64_t v = static_cast<int64_t>((rank * 37 + i * 11) % 101) - 50;
  return type == dcInt32 ? static_cast<double>(v) : v * 0.5;
}

void store(dcDataType_t type, std::byte* p, double v) {
  if (type == dcFloat32) {
    const float f = static_cast<float>(v);
    std::memcpy(p, &f, sizeof f);
  } else if (type == dcFloat64) {
    std::memcpy(p, &v, sizeof v);
  } else {
    const int32_t x = static_cast<int32_t>(v);
    std::memcpy(p, &x, sizeof x);
  }
}

double load(dcDataType_t type, const std::byte* p) {
  if (type == dcFloat32) {
    float f;
    std::memcpy(&f, p, sizeof f);
    return f;
  }
  if (type == dcFloat64) {
    double d;
    std::memcpy(&d, p, sizeof d);
    return d;
  }
  int32_t x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

// op over all ranks of input element `index`.
double reduce_ref(dcRedOp_t op, dcDataType_t type, int n, uint64_t index) {
  double acc = input_value(type, 0, index);
  for (int k = 1; k < n; ++k) {
    const double v = input_value(type, k, index);
    acc = op == dcMax ? std::max(acc, v) : acc + v;
  }
  return op == dcAvg ? acc / n : acc;
}

std::vector<Plan> make_plans(PlanRequest request) {
  std::vector<Plan> plans;
  for (int r = 0; r < request.nranks; ++r) {
    request.rank = r;
    plans.push_back(make_plan(request));
  }
  return plans;
}

// Expected Output element `i` of rank `r`, or NaN where Output does not exist.
double expected(const PlanRequest& q, dcRedOp_t op, dcDataType_t type, int r, uint64_t i) {
  const int n = q.nranks;
  const uint64_t c = q.count;
  switch (q.collective) {
    case dcCollAllReduce:
    case dcCollReduce: return reduce_ref(op, type, n, i);
    case dcCollBroadcast: return input_value(type, q.root, i);
    case dcCollAllGather: return input_value(type, static_cast<int>(i / c), i % c);
    case dcCollReduceScatter: return reduce_ref(op, type, n, r * c + i);
    case dcCollAlltoAll: return input_value(type, static_cast<int>(i / c), r * c + i % c);
    case dcCollGather: return input_value(type, static_cast<int>(i / c), i % c);
    case dcCollScatter: return input_value(type, q.root, r * c + i);
    default: return NAN;
  }
}

// Simulates one operation on all ranks and checks outputs (and untouched inputs out of place).
void simulate_and_check(const PlanRequest& q, TypeOp to, uint64_t seed) {
  SCOPED_TRACE(std::string(collective_name(q.collective)) + " n=" + std::to_string(q.nranks) +
               " count=" + std::to_string(q.count) + " root=" + std::to_string(q.root) +
               " in_place=" + std::to_string(q.in_place) + " algorithms=" + q.algorithms.canonical() +
               " type=" + datatype_name(to.type) + " op=" + redop_name(to.op) +
               " chunk_bytes=" + std::to_string(q.chunk_bytes) +
               " cluster=" + (q.cluster ? q.cluster->describe() : std::string("default")));
  const std::vector<Plan> plans = make_plans(q);
  ASSERT_EQ(sim::check_invariants(plans), "");
  if (q.count <= 13) {  // the hazard check is quadratic in the number of steps
    ASSERT_EQ(sim::check_hazards(plans, q.elem_size), "");
  }

  std::vector<sim::RankMemory> memories;
  for (const Plan& p : plans) {
    memories.push_back(sim::allocate(p, q.elem_size));
    sim::RankMemory& m = memories.back();
    for (uint64_t i = 0; i < p.sizes.input; ++i) {
      store(to.type, sim::address(m, {BufId::Input, i}, q.elem_size),
            input_value(to.type, p.rank, i));
    }
  }
  ASSERT_EQ(sim::run(plans, memories, to.type, to.op, seed), "");

  for (int r = 0; r < q.nranks; ++r) {
    sim::RankMemory& m = memories[r];
    for (uint64_t i = 0; i < plans[r].sizes.output; ++i) {
      const double want = expected(q, to.op, to.type, r, i);
      const double got = load(to.type, sim::address(m, {BufId::Output, i}, q.elem_size));
      ASSERT_NEAR(got, want, 1e-9 * std::max(1.0, std::fabs(want)))
          << "rank " << r << " output element " << i;
    }
    if (!q.in_place) {
      for (uint64_t i = 0; i < plans[r].sizes.input; ++i) {
        ASSERT_EQ(load(to.type, sim::address(m, {BufId::Input, i}, q.elem_size)),
                  input_value(to.type, r, i))
            << "rank " << r << " input element " << i << " was overwritten";
      }
    }
  }
  if (q.collective == dcCollAllReduce) {
    const size_t bytes = q.count * q.elem_size;
    for (int r = 1; r < q.nranks; ++r) {
      ASSERT_EQ(std::memcmp(sim::address(memories[0], {BufId::Output, 0}, q.elem_size),
                            sim::address(memories[r], {BufId::Output, 0}, q.elem_size), bytes),
                0)
          << "rank " << r << " differs bitwise from rank 0";
    }
  }
}

// One host over sockets and over shared memory, and every even split over several hosts.
std::vector<std::shared_ptr<const ClusterView>> clusters_for(int n) {
  std::vector<std::shared_ptr<const ClusterView>> clusters = {ClusterView::one_host(n, false),
                                                              ClusterView::one_host(n, true)};
  for (int hosts = 2; hosts < n; ++hosts)
    if (n % hosts == 0) clusters.push_back(ClusterView::blocks(hosts, n / hosts, true));
  return clusters;
}

std::vector<int> roots_for(int n) {
  if (n == 1) return {0};
  return {0, n - 1, 1};
}

void sweep(dcCollective_t collective, const std::vector<TypeOp>& types,
           const std::vector<std::string>& algorithms) {
  uint64_t seed = 1;
  const bool rooted = collective == dcCollBroadcast || collective == dcCollReduce ||
                      collective == dcCollGather || collective == dcCollScatter;
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

const std::vector<TypeOp> kReductionTypes = {
    {dcFloat32, dcSum}, {dcInt32, dcMax}, {dcFloat64, dcAvg}};
const std::vector<TypeOp> kMovementTypes = {{dcFloat32, dcSum}, {dcFloat64, dcSum}};

TEST(PlanSimulation, AllReduceRingTreeDirectHierarchicalAndChosen) {
  sweep(dcCollAllReduce, kReductionTypes, {"ring", "tree", "direct", "hierarchical", ""});
}
TEST(PlanSimulation, Reduce) { sweep(dcCollReduce, kReductionTypes, {""}); }
TEST(PlanSimulation, ReduceScatter) { sweep(dcCollReduceScatter, kReductionTypes, {""}); }
TEST(PlanSimulation, Broadcast) { sweep(dcCollBroadcast, kMovementTypes, {""}); }
TEST(PlanSimulation, AllGather) { sweep(dcCollAllGather, kMovementTypes, {""}); }
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
      store(dcFloat32, sim::address(memories[0], {BufId::Input, i}, 4),
            input_value(dcFloat32, 0, i));
    }
    ASSERT_EQ(sim::run(plans, memories, dcFloat32, dcSum, 7), "");
    for (uint64_t i = 0; i < count; ++i) {
      ASSERT_EQ(load(dcFloat32, sim::address(memories[2], {BufId::Output, i}, 4)),
                input_value(dcFloat32, 0, i));
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
  for (dcCollective_t c : {dcCollBroadcast, dcCollReduce, dcCollGather, dcCollScatter, dcCollSend,
                           dcCollRecv}) {
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
