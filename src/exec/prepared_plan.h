// A plan plus the reverse dependency lists the executor walks: built once per operation shape and
// shared by every operation that runs it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "src/plan/plan.h"

namespace dc {

struct PreparedPlan {
  Plan plan;
  std::vector<uint32_t> dependents_begin;  // CSR: dependents of step i are
  std::vector<uint32_t> dependents;        // dependents[dependents_begin[i] .. begin[i+1])
};

std::shared_ptr<const PreparedPlan> prepare_plan(Plan plan);

}  // namespace dc
