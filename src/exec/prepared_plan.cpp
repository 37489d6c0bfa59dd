#include "src/exec/prepared_plan.h"

namespace dc {

std::shared_ptr<const PreparedPlan> prepare_plan(const PlanRequest& request) {
  Plan plan = make_plan(request);
  auto prepared = std::make_shared<PreparedPlan>();
  const size_t n = plan.steps.size();
  std::vector<uint32_t> counts(n + 1, 0);
  for (const Step& s : plan.steps)
    for (uint32_t d = 0; d < s.dep_count; ++d) ++counts[plan.deps[s.dep_begin + d] + 1];
  for (size_t i = 0; i < n; ++i) counts[i + 1] += counts[i];
  prepared->dependents_begin = counts;
  prepared->dependents.resize(counts[n]);
  std::vector<uint32_t> fill(counts.begin(), counts.end() - 1);
  for (uint32_t i = 0; i < n; ++i) {
    const Step& s = plan.steps[i];
    for (uint32_t d = 0; d < s.dep_count; ++d) prepared->dependents[fill[plan.deps[s.dep_begin + d]]++] = i;
  }
  prepared->plan = std::move(plan);
  prepared->signature_edges = ring_opening_messages(request);
  return prepared;
}

}  // namespace dc
