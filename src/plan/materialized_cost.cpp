// materialized_traffic: the cost model's loads and latency read off every rank's plan, step by
// step, instead of from a generator's formula.
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "src/plan/cost_model.h"

namespace dc {

namespace {

bool is_message(StepKind k) { return k == StepKind::Send || k == StepKind::Recv || k == StepKind::RecvReduce; }

struct StepId {
  int rank = -1;
  uint32_t index = 0;
};

}  // namespace

Traffic materialized_traffic(const std::vector<Plan>& plans, const PlanRequest& request) {
  const ClusterView& view = *request.cluster;
  const int n = static_cast<int>(plans.size());
  Traffic traffic(view);
  std::map<std::tuple<int, int, uint32_t>, StepId> receives;  // (from, to, tag)
  for (int r = 0; r < n; ++r)
    for (uint32_t i = 0; i < plans[r].steps.size(); ++i) {
      const Step& s = plans[r].steps[i];
      if (s.kind == StepKind::Recv || s.kind == StepKind::RecvReduce) receives[{s.peer, r, s.tag}] = {r, i};
    }

  std::vector<std::vector<StepId>> partner(n);
  std::vector<std::vector<uint32_t>> waiting(n);
  std::vector<std::vector<std::vector<uint32_t>>> dependents(n);
  std::vector<std::vector<double>> start(n), finish(n);
  std::vector<std::vector<bool>> deps_done(n);
  for (int r = 0; r < n; ++r) partner[r].resize(plans[r].steps.size());
  for (int r = 0; r < n; ++r) {
    const Plan& p = plans[r];
    waiting[r].resize(p.steps.size());
    dependents[r].resize(p.steps.size());
    start[r].assign(p.steps.size(), 0.0);
    finish[r].assign(p.steps.size(), 0.0);
    deps_done[r].assign(p.steps.size(), false);
    for (uint32_t i = 0; i < p.steps.size(); ++i) {
      const Step& s = p.steps[i];
      waiting[r][i] = s.dep_count;
      for (uint32_t d = 0; d < s.dep_count; ++d) dependents[r][p.deps[s.dep_begin + d]].push_back(i);
      const double bytes = static_cast<double>(s.count * request.elem_size);
      if (s.kind == StepKind::Send) {
        auto it = receives.find({r, s.peer, s.tag});
        if (it == receives.end()) fail(dcInternalError, "materialized traffic: a send without its receive");
        partner[r][i] = it->second;
        partner[it->second.rank][it->second.index] = {r, i};
        const Step& recv = plans[it->second.rank].steps[it->second.index];
        traffic.transfer(r, s.peer, bytes, recv.kind == StepKind::RecvReduce);
      } else if (s.kind == StepKind::Copy || s.kind == StepKind::Finalize) {
        traffic.memory(r, 2 * bytes);
      } else if (s.kind == StepKind::Reduce) {
        traffic.memory(r, 3 * bytes);
      }
    }
  }

  // Longest chain: a message completes α after both its send and its receive may start.
  std::vector<StepId> ready;
  auto deps_finished = [&](StepId id) {
    deps_done[id.rank][id.index] = true;
    const Step& s = plans[id.rank].steps[id.index];
    if (!is_message(s.kind)) {
      ready.push_back(id);
      return;
    }
    const StepId other = partner[id.rank][id.index];
    if (deps_done[other.rank][other.index]) ready.push_back(id);
  };
  for (int r = 0; r < n; ++r)
    for (uint32_t i = 0; i < plans[r].steps.size(); ++i)
      if (waiting[r][i] == 0) deps_finished({r, i});
  double longest = 0;
  auto complete = [&](StepId id, double at) {
    finish[id.rank][id.index] = at;
    longest = std::max(longest, at);
    for (uint32_t next : dependents[id.rank][id.index]) {
      start[id.rank][next] = std::max(start[id.rank][next], at);
      if (--waiting[id.rank][next] == 0) deps_finished({id.rank, next});
    }
  };
  while (!ready.empty()) {
    const StepId id = ready.back();
    ready.pop_back();
    const Step& s = plans[id.rank].steps[id.index];
    if (!is_message(s.kind)) {
      complete(id, start[id.rank][id.index]);
      continue;
    }
    const StepId other = partner[id.rank][id.index];
    const double at = std::max(start[id.rank][id.index], start[other.rank][other.index]) +
                      view.tier_between(id.rank, s.peer).latency_s;
    complete(id, at);
    complete(other, at);
  }
  traffic.hops(1, longest);
  return traffic;
}

}  // namespace dc
