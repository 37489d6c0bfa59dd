// Which pair of ranks measures which tier: inside a host, the first two ranks of the first host
// holding two; for each network tier, the first ranks of the first two hosts that talk over it.
// Every rank computes the same list from the same cluster view.
#pragma once

#include <string>
#include <vector>

#include "topology/cluster_view.h"

namespace dc::calibrate {

struct TierPair {
  std::string name;
  int network_tier = -1;  // -1: the tier inside a host
  int leader = -1;        // ranks; -1 when no pair of ranks uses the tier
  int follower = -1;
  LinkTier model;  // what the cost model uses for the tier now
};

// The intra-host tier first, then the network tiers in order; tiers with no pair are listed with
// leader -1 so that the caller can say so.
std::vector<TierPair> tier_pairs(const ClusterView& view);

}  // namespace dc::calibrate
