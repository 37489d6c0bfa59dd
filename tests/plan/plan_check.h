// What the plan tests share: inputs that sum exactly, a float64 reference of every collective's
// output, and one operation simulated on all ranks with its result checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "src/plan/plan.h"

namespace dc {

struct TypeOp {
  dcDataType_t type;
  dcRedOp_t op;
};

// Inputs are small multiples of 1/2, so float sums of up to 8 of them are exact.
double input_value(dcDataType_t type, int rank, uint64_t i);
void store(dcDataType_t type, std::byte* p, double v);
double load(dcDataType_t type, const std::byte* p);

// The plans of every rank of the request.
std::vector<Plan> make_plans(PlanRequest request);

// Simulates one operation on all ranks (plan_sim.h) after the invariant checks (and the hazard
// check for counts up to 13) and checks every output against the reference, untouched inputs out
// of place, and bitwise-equal all-reduce results. Reports through gtest assertions.
void simulate_and_check(const PlanRequest& q, TypeOp to, uint64_t seed);

// Rank r's float32 element i: a signed zero or a NaN whose payload names the rank, so that min and
// max give different bytes for different operand orders.
float operand_order_input(int rank, uint64_t i);
// Runs q's float32 all-reduce plans with op on those inputs; each rank's output, or the
// simulator's error in *error.
std::vector<std::vector<float>> run_on_operand_order_inputs(const PlanRequest& q, dcRedOp_t op, std::string* error);

}  // namespace dc
