#include "tools/sim/sim_rows.h"

#include <string>

#include "base/error.h"
#include "src/plan/cost_model.h"
#include "src/plan/generators.h"
#include "src/plan/plan.h"
#include "src/plan/select.h"

namespace dc::tools {

namespace {

double materialized_seconds(PlanRequest q, const char* algorithm) {
  q.algorithms = AlgorithmFilter::only(algorithm);
  std::vector<Plan> plans;
  for (int r = 0; r < q.nranks; ++r) {
    q.rank = r;
    plans.push_back(make_plan(q));
  }
  return materialized_traffic(plans, q).seconds();
}

}  // namespace

std::vector<uint64_t> sizes(const SimOptions& o) {
  std::vector<uint64_t> out;
  for (uint64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.factor) {
    out.push_back(bytes);
    if (bytes > o.max_bytes / o.factor) break;  // the next size would pass max (or overflow)
  }
  return out;
}

std::vector<SimRow> simulate(const std::shared_ptr<const ClusterView>& cluster, const SimOptions& o) {
  const int n = cluster->nranks();
  if (n < 2) fail(dcInvalidArgument, "one rank: no collective to price (give more hosts or ranks per host)");
  if (o.check && n > kMaxCheckedRanks)
    fail(dcInvalidArgument, "--check builds every rank's plan: at most " + std::to_string(kMaxCheckedRanks) +
                                " ranks, not " + std::to_string(n));
  std::vector<int> everyone(n);
  for (int r = 0; r < n; ++r) everyone[r] = r;
  std::vector<SimRow> rows;
  for (dcCollective_t c : o.collectives) {
    for (uint64_t bytes : sizes(o)) {
      PlanRequest q;
      q.collective = c;
      q.nranks = n;
      q.root = is_rooted(c) ? 0 : -1;
      q.count = bytes / 4 ? bytes / 4 : 1;
      q.cluster = cluster;
      const std::vector<PricedGenerator> priced = price_candidates(q);
      // price_candidates orders by time; the table keeps registry order and adds the α part.
      for (const Generator& g : generator_registry()) {
        if (g.collective != c || g.compressed || !g.applicable(q, everyone)) continue;
        const Traffic t = g.traffic(q, everyone);
        const bool chosen = priced.front().generator == &g;
        SimRow row{c,      bytes, g.name, t.seconds(), t.latency_seconds(), t.network_seconds(), t.fill_seconds(),
                   chosen, {}};
        if (o.check) row.materialized_seconds = materialized_seconds(q, g.name);
        rows.push_back(row);
      }
    }
  }
  return rows;
}

}  // namespace dc::tools
