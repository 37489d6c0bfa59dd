#include "src/plan/tuning.h"

#include <algorithm>

#include "base/error.h"
#include "src/plan/algorithm_filter.h"
#include "src/plan/generators.h"

namespace dc {

void check_tuning_rules(const topo::TopologyFile& file) {
  for (size_t i = 0; i < file.tuning.size(); ++i) {
    const topo::TuningRule& rule = file.tuning[i];
    const std::string where =
        "topology file " + file.source + ":" + std::to_string(rule.line) + ": tuning[" + std::to_string(i) + "].";
    const int collective = collective_by_name(rule.collective);
    if (collective < 0)
      fail(dcInvalidArgument, where + "collective: unknown collective \"" + rule.collective +
                                  "\" (expected allreduce, allgather, reducescatter, broadcast, reduce, alltoall, "
                                  "gather or scatter)");
    std::vector<std::string> names;
    for (const Generator& g : generator_registry())
      if (g.collective == collective && !g.compressed && std::find(names.begin(), names.end(), g.name) == names.end())
        names.push_back(g.name);
    if (std::find(names.begin(), names.end(), rule.algorithm) != names.end()) continue;
    std::string expected;
    for (const std::string& name : names) expected += (expected.empty() ? "" : ", ") + name;
    fail(dcInvalidArgument, where + "algorithm: " + rule.collective + " has no algorithm \"" + rule.algorithm +
                                "\" (expected one of " + expected + ")");
  }
}

int tuned_candidate(const PlanRequest& request, const std::vector<PricedGenerator>& candidates) {
  if (!request.cluster || request.compression) return -1;
  const uint64_t bytes = request.count * request.elem_size;
  for (const topo::TuningRule& rule : request.cluster->tuning()) {
    if (collective_by_name(rule.collective) != request.collective) continue;
    if (bytes < rule.min_bytes || bytes > rule.max_bytes) continue;
    if (rule.hosts != 0 && rule.hosts != request.cluster->nhosts()) continue;
    if (rule.ranks != 0 && rule.ranks != request.nranks) continue;
    for (size_t i = 0; i < candidates.size(); ++i)
      if (rule.algorithm == candidates[i].generator->name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace dc
