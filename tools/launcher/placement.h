// Where deepcomm-run puts its ranks: how many on each host, and each rank's host and local rank.
// Block placement: ranks 0..c0-1 on the first host, the next c1 on the second, and so on.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dc::launcher {

struct RankPlace {
  int host = 0;          // index into the launcher's host list
  int local_rank = 0;    // rank among the ranks of its host
  int local_nranks = 0;  // ranks on its host
};

// Ranks on each of nhosts hosts. `requested` is --ranks-per-host: empty (split nranks as evenly as
// possible, the first hosts taking one more), one count for every host, or one count per host.
// nranks 0 means "not given" (then it is the sum of `requested`). nullopt with *error set when the
// numbers do not fit together.
std::optional<std::vector<int>> ranks_per_host(int nranks, int nhosts, const std::vector<int>& requested,
                                               std::string* error);

// One entry per rank, in rank order.
std::vector<RankPlace> block_placement(const std::vector<int>& ranks_per_host);

}  // namespace dc::launcher
