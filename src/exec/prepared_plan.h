// A plan plus the reverse dependency lists the executor walks: built once per operation shape and
// shared by every operation that runs it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "src/plan/opening_messages.h"
#include "src/plan/plan.h"

namespace dc {

struct PreparedPlan {
  Plan plan;
  std::vector<uint32_t> dependents_begin;  // CSR: dependents of step i are
  std::vector<uint32_t> dependents;        // dependents[dependents_begin[i] .. begin[i+1])
  // The signature ring's edges that the plan's own opening messages carry (opening_messages.h).
  OpeningMessages signature_edges;
};

// The plan of request.rank, prepared.
std::shared_ptr<const PreparedPlan> prepare_plan(const PlanRequest& request);

}  // namespace dc
