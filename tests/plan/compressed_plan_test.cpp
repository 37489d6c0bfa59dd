// Compressed all-reduce plans as data: the simulator runs them with the real codecs (every rank's
// plan, messages at their run-time lengths, RecvDecode in random pieces) and checks the invariants,
// the hazards, exact results where the spec loses nothing, bounded error where it does, bitwise
// identical outputs on every rank, and that error feedback loses nothing over calls.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "compression/compression.h"
#include "kernels/reduce.h"
#include "src/plan/plan.h"
#include "src/plan/select.h"
#include "tests/plan/plan_invariants.h"
#include "tests/plan/plan_sim.h"

namespace dc {
namespace {

using compression::parse_spec;

// Small multiples of 1/2: float32 and float16 sums of up to 8 of them are exact.
double half_steps(int rank, uint64_t i) {
  return static_cast<double>(static_cast<int64_t>((rank * 37 + i * 11) % 101) - 50) * 0.5;
}

// Gradient-like values: mostly small, a few large.
double gradient_like(int rank, uint64_t i) {
  uint64_t h = (static_cast<uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ull ^ (i * 0xC2B2AE3D27D4EB4Full);
  h ^= h >> 31;
  const double u = static_cast<double>(h % 100000) / 100000.0 - 0.5;
  return (i % 97 == 0 ? 8.0 : 0.05) * u;
}

void store(dcDataType_t type, std::byte* p, double v) {
  const float f = static_cast<float>(v);
  if (type == dcFloat32) return (void)std::memcpy(p, &f, 4);
  const uint16_t h = type == dcFloat16 ? float_to_half(f) : float_to_bf16(f);
  std::memcpy(p, &h, 2);
}

double load(dcDataType_t type, const std::byte* p) {
  if (type == dcFloat32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return type == dcFloat16 ? half_to_float(h) : bf16_to_float(h);
}

struct Simulation {
  std::vector<Plan> plans;
  std::vector<sim::RankMemory> memories;
};

PlanRequest request(int n, uint64_t count, const std::string& spec, dcDataType_t type, bool in_place,
                    const std::string& algorithm, std::shared_ptr<const ClusterView> cluster = nullptr) {
  PlanRequest q;
  q.cluster = cluster;
  q.nranks = n;
  q.count = count;
  q.elem_size = datatype_size(type);
  q.in_place = in_place;
  q.compression = parse_spec(spec);
  if (!algorithm.empty()) q.algorithms = AlgorithmFilter::only(algorithm);
  return q;
}

Simulation prepare(PlanRequest q, dcDataType_t type, double (*value)(int, uint64_t)) {
  Simulation run;
  for (int r = 0; r < q.nranks; ++r) {
    q.rank = r;
    run.plans.push_back(make_plan(q));
    run.memories.push_back(sim::allocate(run.plans.back(), q.elem_size));
  }
  for (int r = 0; r < q.nranks; ++r)
    for (uint64_t i = 0; i < q.count; ++i)
      store(type, sim::address(run.memories[r], {BufId::Input, i}, q.elem_size), value(r, i));
  return run;
}

// Simulates, then checks invariants and bitwise equality; returns rank 0's output.
std::vector<double> simulate(Simulation& run, const PlanRequest& q, dcDataType_t type, dcRedOp_t op, uint64_t seed) {
  EXPECT_EQ(sim::check_invariants(run.plans), "");
  if (q.count <= 13) EXPECT_EQ(sim::check_hazards(run.plans, q.elem_size), "");
  EXPECT_EQ(sim::run(run.plans, run.memories, type, op, seed), "");
  std::vector<double> out(q.count);
  const size_t bytes = q.count * q.elem_size;
  for (int r = 1; r < q.nranks; ++r)
    EXPECT_EQ(std::memcmp(sim::address(run.memories[0], {BufId::Output, 0}, q.elem_size),
                          sim::address(run.memories[r], {BufId::Output, 0}, q.elem_size), bytes),
              0)
        << "rank " << r << " differs bitwise from rank 0";
  for (uint64_t i = 0; i < q.count; ++i)
    out[i] = load(type, sim::address(run.memories[0], {BufId::Output, i}, q.elem_size));
  return out;
}

const std::vector<std::string> kAlgorithms = {"twophase", "sparsegather", ""};

// Hosts of 1 to 4 ranks, even and uneven, over shared memory and over sockets inside each.
std::vector<std::shared_ptr<const ClusterView>> host_layouts() {
  std::vector<std::shared_ptr<const ClusterView>> layouts;
  for (const std::vector<int>& per_host :
       std::vector<std::vector<int>>{{2, 2}, {2, 2, 2}, {3, 3}, {4, 4}, {3, 1}, {1, 2, 3}})
    for (bool shm : {true, false}) layouts.push_back(ClusterView::layout(per_host, shm));
  return layouts;
}

TEST(CompressedPlanSimulation, HierarchicalIsDenseInsideHostsAndCompressedAcross) {
  uint64_t seed = 300;
  for (const auto& cluster : host_layouts())
    for (uint64_t count : {5, 13, 70001})
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(cluster->describe() + " count=" + std::to_string(count) + " in_place=" + std::to_string(in_place));
        const int n = cluster->nranks();
        PlanRequest q = request(n, count, "topk:1", dcFloat32, in_place, "hiercompressed", cluster);
        Simulation run = prepare(q, dcFloat32, half_steps);
        ASSERT_EQ(run.plans[0].algorithm, "hiercompressed");
        // A rank with host peers: reduce-scatter, the compressed phases of the segments it owns,
        // all-gather; a rank alone on its host: only compressed phases.
        for (const Plan& plan : run.plans) {
          const bool alone = cluster->ranks_on_host(cluster->host_of(plan.rank)).size() == 1;
          ASSERT_FALSE(plan.phases.empty());
          for (size_t p = 0; p < plan.phases.size(); ++p) {
            const bool dense = !alone && (p == 0 || p + 1 == plan.phases.size());
            ASSERT_EQ(plan.phases[p].name,
                      dense ? (p == 0 ? "reduce-scatter in host" : "all-gather in host") : "compressed all-reduce");
          }
        }
        std::vector<double> out = simulate(run, q, dcFloat32, dcSum, seed++);
        for (uint64_t i = 0; i < count; ++i) {
          double want = 0;
          for (int r = 0; r < n; ++r) want += half_steps(r, i);
          ASSERT_EQ(out[i], want) << "element " << i;
        }
        // Messages cross hosts only: every message step's peer is on another host.
        for (const Plan& plan : run.plans)
          for (const Step& s : plan.steps)
            if (s.kind >= StepKind::Encode && is_transfer(s.kind)) ASSERT_FALSE(cluster->same_host(plan.rank, s.peer));
        q.compression = parse_spec("q8,ef");
        run = prepare(q, dcFloat32, gradient_like);
        simulate(run, q, dcFloat32, dcAvg, seed++);  // bitwise identical everywhere
        if (testing::Test::HasFailure()) return;
      }
}

TEST(CompressedPlanSimulation, LosslessSpecGivesTheExactSum) {
  // topk:1 keeps every element as float32: the plans must then add exactly like a dense one.
  uint64_t seed = 1;
  for (int n : {2, 3, 4, 5, 8})
    for (uint64_t count : {1, 7, 13, 1031, 70001})
      for (bool in_place : {false, true})
        for (dcDataType_t type : {dcFloat32, dcFloat16})
          for (const std::string& algorithm : kAlgorithms) {
            SCOPED_TRACE("n=" + std::to_string(n) + " count=" + std::to_string(count) +
                         " in_place=" + std::to_string(in_place) + " " + datatype_name(type) + " " + algorithm);
            const PlanRequest q = request(n, count, "topk:1", type, in_place, algorithm);
            Simulation run = prepare(q, type, half_steps);
            const std::vector<double> out = simulate(run, q, type, dcSum, seed++);
            for (uint64_t i = 0; i < count; ++i) {
              double want = 0;
              for (int r = 0; r < n; ++r) want += half_steps(r, i);
              ASSERT_EQ(out[i], want) << "element " << i;
            }
            if (testing::Test::HasFailure()) return;
          }
}

TEST(CompressedPlanSimulation, QuantizedSumsStayWithinTheQuantizationError) {
  uint64_t seed = 100;
  for (int n : {2, 3, 4, 7})
    for (uint64_t count : {13, 1031, 70001})
      for (dcDataType_t type : {dcFloat32, dcFloat16, dcBfloat16})
        for (dcRedOp_t op : {dcSum, dcAvg})
          for (const std::string& algorithm : kAlgorithms) {
            SCOPED_TRACE("n=" + std::to_string(n) + " count=" + std::to_string(count) + " " + datatype_name(type) +
                         " " + redop_name(op) + " " + algorithm);
            const PlanRequest q = request(n, count, "q8,huffman", type, count == 1031, algorithm);
            Simulation run = prepare(q, type, half_steps);
            const std::vector<double> out = simulate(run, q, type, op, seed++);
            // Each quantization errs by at most half a step of its block (max 50/126 here for an
            // input, 50n/126 for a sum), and the narrow types round each addition.
            const double step = 50.0 / 126;
            const double eps = type == dcFloat32 ? 1e-6 : type == dcFloat16 ? 1e-3 : 8e-3;
            for (uint64_t i = 0; i < count; ++i) {
              double want = 0;
              for (int r = 0; r < n; ++r) want += half_steps(r, i);
              double bound = 0.5 * step * n * 2 + eps * 50 * n * (n + 2);
              if (op == dcAvg) want /= n, bound /= n;
              ASSERT_NEAR(out[i], want, bound) << "element " << i;
            }
            if (testing::Test::HasFailure()) return;
          }
}

TEST(CompressedPlanSimulation, ErrorFeedbackLosesNothingOverCalls) {
  // With ef (beta 1), over T calls: sum of outputs + every rank's final residual = T x the true
  // sum, per element, for both algorithms: what a call leaves out waits in some rank's residual.
  for (const std::string& algorithm : {"twophase", "sparsegather", "hiercompressed"})
    for (int n : {2, 3, 4, 6}) {
      SCOPED_TRACE(algorithm + " n=" + std::to_string(n));
      const bool hierarchical = algorithm == "hiercompressed";
      if (hierarchical && n % 2) continue;
      const uint64_t count = 5000;
      const PlanRequest q = request(n, count, "topk:0.02,q8,huffman,ef", dcFloat32, false, algorithm,
                                    hierarchical ? ClusterView::blocks(2, n / 2, true) : nullptr);
      Simulation run = prepare(q, dcFloat32, gradient_like);
      std::vector<double> total(count, 0.0);
      const int calls = 12;
      for (int t = 0; t < calls; ++t) {
        const std::vector<double> out = simulate(run, q, dcFloat32, dcSum, 1000 + t);
        for (uint64_t i = 0; i < count; ++i) total[i] += out[i];
      }
      for (uint64_t i = 0; i < count; ++i) {
        double truth = 0, waiting = 0;
        for (int r = 0; r < n; ++r) {
          truth += gradient_like(r, i);
          waiting += run.memories[r].residual[i];
        }
        ASSERT_NEAR(total[i] + waiting, calls * truth, 1e-4 * (1 + std::fabs(calls * truth))) << "element " << i;
      }
      // And it did compress: most elements were held back in some call.
      size_t held = 0;
      for (uint64_t i = 0; i < count; ++i)
        for (int r = 0; r < n; ++r) held += run.memories[r].residual[i] != 0.0f;
      EXPECT_GT(held, count / 2);
    }
}

TEST(CompressedPlanSimulation, TopKOnGradientsIsBitwiseIdenticalEverywhere) {
  uint64_t seed = 7;
  for (int n : {2, 4, 8})
    for (dcDataType_t type : {dcFloat32, dcFloat16, dcBfloat16})
      for (const std::string& spec : {"topk:0.01,q8,huffman,ef", "topk:0.05:sampled,q8:stochastic,ef", "auto,ef"})
        for (const std::string& algorithm : kAlgorithms) {
          SCOPED_TRACE(spec + " n=" + std::to_string(n) + " " + datatype_name(type) + " " + algorithm);
          const PlanRequest q = request(n, 70001, spec, type, n == 4, algorithm);
          Simulation run = prepare(q, type, gradient_like);
          simulate(run, q, type, dcAvg, seed++);
          if (testing::Test::HasFailure()) return;
        }
}

TEST(CompressedPlanShape, OnlyCompressedGeneratorsApplyAndTheModelChooses) {
  PlanRequest q = request(2, 25 << 20, "topk:0.001,q8,huffman,ef", dcFloat32, false, "");
  q.cluster = ClusterView::one_host(2, false);
  const std::vector<PricedGenerator> two = price_candidates(q);
  ASSERT_EQ(two.size(), 2u);
  for (const auto& c : two) EXPECT_TRUE(c.generator->compressed) << c.generator->name;
  EXPECT_STREQ(two[0].generator->name, "sparsegather");  // one message each way, one hop
  q.nranks = 16;
  q.cluster = ClusterView::one_host(16, false);
  EXPECT_STREQ(price_candidates(q)[0].generator->name, "twophase");  // 2/n of the bytes
  q.compression = parse_spec("q8,ef");
  q.nranks = 4;
  q.cluster = ClusterView::one_host(4, false);
  EXPECT_STREQ(price_candidates(q)[0].generator->name, "twophase");
  // A filter naming only dense algorithms leaves the compressed ones (nothing else applies).
  q.algorithms = AlgorithmFilter::only("ring");
  EXPECT_EQ(make_plan(q).algorithm, "twophase");
  // Hosts joined by a slow link: dense inside each host, compressed across.
  q.algorithms = AlgorithmFilter{};
  q.nranks = 8;
  q.cluster = ClusterView::blocks(2, 4, true);
  EXPECT_EQ(make_plan(q).algorithm, "hiercompressed");
  q.compression.reset();
  EXPECT_EQ(make_plan(q).algorithm, "hierarchical");  // the dense counterpart, without a spec
}

TEST(CompressedPlanShape, MessagesPostTheWorstCaseAndJsonShowsThem) {
  PlanRequest q = request(3, 6, "q8,ef", dcFloat32, false, "twophase");
  q.rank = 1;
  const Plan plan = make_plan(q);
  ASSERT_TRUE(plan.compression);
  EXPECT_EQ(plan.sizes.residual, 6u);
  size_t encodes = 0, receives = 0, forwards = 0;
  for (const Step& s : plan.steps) {
    if (s.kind >= StepKind::Encode) EXPECT_EQ(s.bytes, compression::max_message_bytes(*q.compression, s.count));
    encodes += s.kind == StepKind::Encode;
    receives += s.kind == StepKind::RecvDecode || s.kind == StepKind::RecvMessage;
    forwards += s.kind == StepKind::SendMessage;
  }
  EXPECT_EQ(encodes, 3u);   // two blocks for their owners, the own sum
  EXPECT_EQ(receives, 4u);  // two blocks into the sum, two owners' messages
  EXPECT_EQ(forwards, 4u);  // two blocks to owners, the own message and one forwarded
  const std::string json = plan_to_json(plan);
  for (const char* key : {"\"compression\":\"q8,ef\"", "\"length_slots\":", "\"kind\":\"Encode\"",
                          "\"kind\":\"RecvDecode\"", "\"overwrite\":true", "\"buf\":\"residual\"", "\"buf\":\"bytes\""})
    EXPECT_NE(json.find(key), std::string::npos) << key;
}

TEST(CompressedPlanShape, SingleRankCopiesAndBadRequestsAreRefused) {
  PlanRequest q = request(1, 100, "q8", dcFloat32, false, "");
  const Plan one = make_plan(q);
  ASSERT_EQ(one.steps.size(), 1u);
  EXPECT_EQ(one.steps[0].kind, StepKind::Copy);
  q = request(4, 100, "q8", dcFloat32, false, "");
  q.elem_size = 8;
  EXPECT_THROW(make_plan(q), Error);
  q.elem_size = 4;
  q.collective = dcCollReduceScatter;
  EXPECT_THROW(make_plan(q), Error);
}

TEST(CompressedPlanSimulation, DetectsAMessageLongerThanItsReceiveCapacity) {
  const PlanRequest q = request(2, 1000, "q8", dcFloat32, false, "sparsegather");
  Simulation run = prepare(q, dcFloat32, half_steps);
  for (Step& s : run.plans[1].steps)
    if (s.kind == StepKind::RecvMessage) s.bytes = 64;
  EXPECT_NE(sim::run(run.plans, run.memories, dcFloat32, dcSum, 5).find("can hold"), std::string::npos);
  EXPECT_NE(sim::check_invariants(run.plans), "");
}

}  // namespace
}  // namespace dc
