// deepcomm-sim's numbers: for each collective and size, every applicable generator's predicted
// time from its analytical traffic (no plan is built, so thousands of ranks price in seconds),
// and with `check` the time of the materialized plans of every rank as well.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "src/plan/plan.h"
#include "topology/cluster_view.h"

namespace dc::tools {

// --check builds every rank's plan: only on small clusters.
constexpr int kMaxCheckedRanks = 64;

struct SimOptions {
  std::vector<dcCollective_t> collectives{dcCollAllReduce};
  uint64_t min_bytes = 4;
  uint64_t max_bytes = 1ull << 30;
  uint64_t factor = 4;
  bool check = false;
};

struct SimRow {
  dcCollective_t collective;
  uint64_t bytes;  // count x 4 (float32), NCCL's count
  const char* algorithm;
  double seconds;                              // the cost model's prediction
  double latency_seconds;                      // its α part: messages on the critical path
  double network_seconds;                      // the busiest network link's bytes over its rate
  double fill_seconds;                         // a tree's pipeline fill (tree_shape.h), which the plans' price lacks
  bool chosen;                                 // what the selector picks
  std::optional<double> materialized_seconds;  // with check
};

// The sizes min, min x factor, ... up to max.
std::vector<uint64_t> sizes(const SimOptions& options);

// Rows per collective, then size, then algorithm in registry order. Throws dc::Error
// (dcInvalidArgument) for a single rank, or check on more than kMaxCheckedRanks ranks.
std::vector<SimRow> simulate(const std::shared_ptr<const ClusterView>& cluster, const SimOptions& options);

}  // namespace dc::tools
