#include "tools/launcher/placement.h"

#include <numeric>

namespace dc::launcher {

std::optional<std::vector<int>> ranks_per_host(int nranks, int nhosts, const std::vector<int>& requested,
                                               std::string* error) {
  std::vector<int> counts;
  if (requested.empty()) {
    if (nranks < nhosts) {
      *error = "-n " + std::to_string(nranks) + " leaves some of the " + std::to_string(nhosts) +
               " hosts of --netns without a rank (--ranks-per-host can say so: 1,0)";
      return std::nullopt;
    }
    for (int h = 0; h < nhosts; ++h) counts.push_back(nranks / nhosts + (h < nranks % nhosts));
    return counts;
  }
  if (requested.size() == 1) {
    counts.assign(nhosts, requested[0]);
  } else if (static_cast<int>(requested.size()) == nhosts) {
    counts = requested;
  } else {
    *error =
        "--ranks-per-host has " + std::to_string(requested.size()) + " counts for " + std::to_string(nhosts) + " hosts";
    return std::nullopt;
  }
  long long total = std::accumulate(counts.begin(), counts.end(), 0LL);
  if (total < 1 || total > 1000000) {
    *error = "--ranks-per-host places " + std::to_string(total) + " ranks (1 or more needed)";
    return std::nullopt;
  }
  if (nranks != 0 && total != nranks) {
    *error = "--ranks-per-host places " + std::to_string(total) + " ranks but -n asks for " + std::to_string(nranks);
    return std::nullopt;
  }
  return counts;
}

std::vector<RankPlace> block_placement(const std::vector<int>& ranks_per_host) {
  std::vector<RankPlace> places;
  for (int h = 0; h < static_cast<int>(ranks_per_host.size()); ++h)
    for (int local = 0; local < ranks_per_host[h]; ++local) places.push_back({h, local, ranks_per_host[h]});
  return places;
}

}  // namespace dc::launcher
