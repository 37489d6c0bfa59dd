// The selector: prices every applicable generator of a request's collective with the cost model
// and orders them, cheapest first, unless a tuning rule of the cluster view puts a measured choice
// first (src/plan/tuning.h).
#pragma once

#include <vector>

#include "src/plan/generators.h"

namespace dc {

struct PricedGenerator {
  const Generator* generator;
  double seconds;
  bool tuned = false;  // put first by a tuning rule
};

// The generators of the request's collective that apply to all its ranks and that the request's
// filter allows — every applicable one when the filter allows none of them — each with its
// predicted time, cheapest first (registry order among equals), with a matching tuning rule's
// choice moved to the front. tree_threshold_bytes, when set, keeps only the tree below it and drops
// the tree at or above it.
std::vector<PricedGenerator> price_candidates(const PlanRequest& request);

}  // namespace dc
