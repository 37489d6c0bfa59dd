#include <algorithm>
#include <vector>

#include "src/plan/cost_model.h"

namespace dc {

double plan_time_seconds(const Plan& plan, size_t elem_size) {
  std::vector<double> finish(plan.steps.size(), 0.0);
  double longest = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step& s = plan.steps[i];
    double start = 0;
    for (uint32_t d = 0; d < s.dep_count; ++d) start = std::max(start, finish[plan.deps[s.dep_begin + d]]);
    const double bytes = static_cast<double>(s.count * elem_size);
    const bool transfer = s.kind == StepKind::Send || s.kind == StepKind::Recv || s.kind == StepKind::RecvReduce;
    finish[i] = start + (transfer ? kAlphaSeconds : 0.0) + kBetaSecondsPerByte * bytes;
    longest = std::max(longest, finish[i]);
  }
  return longest;
}

}  // namespace dc
