#include "tools/calibrate/tier_pairs.h"

namespace dc::calibrate {

std::vector<TierPair> tier_pairs(const ClusterView& view) {
  std::vector<TierPair> pairs;
  TierPair intra{view.intra_host().name, -1, -1, -1, view.intra_host()};
  for (int h = 0; h < view.nhosts() && intra.leader < 0; ++h) {
    const std::vector<int>& ranks = view.ranks_on_host(h);
    if (ranks.size() >= 2) {
      intra.leader = ranks[0];
      intra.follower = ranks[1];
    }
  }
  pairs.push_back(intra);
  for (int t = 0; t < view.network_tiers(); ++t) {
    TierPair pair{view.network_tier(t).name, t, -1, -1, view.network_tier(t)};
    for (int a = 0; a < view.nhosts() && pair.leader < 0; ++a)
      for (int b = a + 1; b < view.nhosts(); ++b)
        if (view.tier_index(a, b) == t) {
          pair.leader = view.ranks_on_host(a).front();
          pair.follower = view.ranks_on_host(b).front();
          break;
        }
    pairs.push_back(pair);
  }
  return pairs;
}

}  // namespace dc::calibrate
