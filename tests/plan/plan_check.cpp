#include "tests/plan/plan_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "kernels/reduce.h"
#include "tests/plan/plan_invariants.h"
#include "tests/plan/plan_sim.h"

namespace dc {

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
namespace {

double reduce_ref(dcRedOp_t op, dcDataType_t type, int n, uint64_t index) {
  double acc = input_value(type, 0, index);
  for (int k = 1; k < n; ++k) {
    const double v = input_value(type, k, index);
    acc = op == dcMax ? std::max(acc, v) : acc + v;
  }
  return op == dcAvg ? acc / n : acc;
}

}  // namespace

std::vector<Plan> make_plans(PlanRequest request) {
  std::vector<Plan> plans;
  for (int r = 0; r < request.nranks; ++r) {
    request.rank = r;
    plans.push_back(make_plan(request));
  }
  return plans;
}

namespace {

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

}  // namespace

// Simulates one operation on all ranks and checks outputs (and untouched inputs out of place).
void simulate_and_check(const PlanRequest& q, TypeOp to, uint64_t seed) {
  SCOPED_TRACE(std::string(collective_name(q.collective)) + " n=" + std::to_string(q.nranks) + " count=" +
               std::to_string(q.count) + " root=" + std::to_string(q.root) + " in_place=" + std::to_string(q.in_place) +
               " algorithms=" + q.algorithms.canonical() + " type=" + datatype_name(to.type) +
               " op=" + redop_name(to.op) + " chunk_bytes=" + std::to_string(q.chunk_bytes) +
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
      store(to.type, sim::address(m, {BufId::Input, i}, q.elem_size), input_value(to.type, p.rank, i));
    }
  }
  ASSERT_EQ(sim::run(plans, memories, to.type, to.op, seed), "");

  for (int r = 0; r < q.nranks; ++r) {
    sim::RankMemory& m = memories[r];
    for (uint64_t i = 0; i < plans[r].sizes.output; ++i) {
      const double want = expected(q, to.op, to.type, r, i);
      const double got = load(to.type, sim::address(m, {BufId::Output, i}, q.elem_size));
      ASSERT_NEAR(got, want, 1e-9 * std::max(1.0, std::fabs(want))) << "rank " << r << " output element " << i;
    }
    if (!q.in_place) {
      for (uint64_t i = 0; i < plans[r].sizes.input; ++i) {
        ASSERT_EQ(load(to.type, sim::address(m, {BufId::Input, i}, q.elem_size)), input_value(to.type, r, i))
            << "rank " << r << " input element " << i << " was overwritten";
      }
    }
  }
  if (q.collective == dcCollAllReduce) {
    const size_t bytes = q.count * q.elem_size;
    for (int r = 1; r < q.nranks && bytes > 0; ++r) {
      ASSERT_EQ(std::memcmp(sim::address(memories[0], {BufId::Output, 0}, q.elem_size),
                            sim::address(memories[r], {BufId::Output, 0}, q.elem_size), bytes),
                0)
          << "rank " << r << " differs bitwise from rank 0";
    }
  }
}

float operand_order_input(int rank, uint64_t i) {
  switch ((i + static_cast<uint64_t>(rank) * (i / 3 + 1)) % 3) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    default: {
      uint32_t bits = 0x7fc00000u | static_cast<uint32_t>(rank + 1);
      float nan;
      std::memcpy(&nan, &bits, sizeof nan);
      return nan;
    }
  }
}

std::vector<std::vector<float>> run_on_operand_order_inputs(const PlanRequest& q, dcRedOp_t op, std::string* error) {
  const std::vector<Plan> plans = make_plans(q);
  std::vector<sim::RankMemory> memories;
  for (const Plan& p : plans) {
    memories.push_back(sim::allocate(p, sizeof(float)));
    for (uint64_t i = 0; i < q.count; ++i) {
      const float v = operand_order_input(p.rank, i);
      std::memcpy(sim::address(memories.back(), {BufId::Input, i}, sizeof(float)), &v, sizeof v);
    }
  }
  *error = sim::run(plans, memories, dcFloat32, op, 1);
  std::vector<std::vector<float>> outputs;
  for (sim::RankMemory& m : memories) {
    outputs.emplace_back(q.count);
    std::memcpy(outputs.back().data(), sim::address(m, {BufId::Output, 0}, sizeof(float)), q.count * sizeof(float));
  }
  return outputs;
}

}  // namespace dc
