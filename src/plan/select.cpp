#include "src/plan/select.h"

#include <algorithm>

#include "src/plan/tuning.h"

namespace dc {

namespace {

bool threshold_keeps(const PlanRequest& request, const Generator& g) {
  if (request.collective != dcCollAllReduce || request.tree_threshold_bytes == 0 || g.compressed) return true;
  const bool small = request.count * request.elem_size < request.tree_threshold_bytes;
  return (std::string(g.name) == "tree") == small;
}

}  // namespace

std::vector<PricedGenerator> price_candidates(const PlanRequest& request) {
  std::vector<int> everyone(request.nranks);
  for (int r = 0; r < request.nranks; ++r) everyone[r] = r;
  std::vector<const Generator*> applicable, allowed;
  for (const Generator& g : generator_registry()) {
    if (g.collective != request.collective || g.compressed != request.compression.has_value() ||
        !g.applicable(request, everyone))
      continue;
    applicable.push_back(&g);
    if (request.algorithms.allows(request.collective, g.name) && threshold_keeps(request, g)) allowed.push_back(&g);
  }
  if (allowed.empty()) {
    // The settings name nothing that applies here: the model chooses among all (as NCCL ignores
    // an algorithm a collective lacks).
    for (const Generator* g : applicable)
      if (threshold_keeps(request, *g)) allowed.push_back(g);
    if (allowed.empty()) allowed = applicable;
  }
  std::vector<PricedGenerator> priced;
  for (const Generator* g : allowed) priced.push_back({g, g->traffic(request, everyone).seconds()});
  std::stable_sort(priced.begin(), priced.end(),
                   [](const PricedGenerator& a, const PricedGenerator& b) { return a.seconds < b.seconds; });
  if (const int at = tuned_candidate(request, priced); at >= 0) {
    std::rotate(priced.begin(), priced.begin() + at, priced.begin() + at + 1);
    priced.front().tuned = true;
  }
  return priced;
}

}  // namespace dc
