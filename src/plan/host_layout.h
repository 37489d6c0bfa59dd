// The hosts of a request's ranks as the hierarchical all-gather, reduce-scatter, broadcast and
// reduce see them: hosts in topology order, and on each host the member that holds (or gathers)
// the data of a rank of another host. Internal to src/plan/.
#pragma once

#include <vector>

#include "src/plan/plan.h"

namespace dc {

struct HostLayout {
  std::vector<std::vector<int>> hosts;  // comm ranks per host by local index, hosts in topology order
  std::vector<int> host_pos;            // per rank: its host's position in `hosts`
  std::vector<int> local;               // per rank: its local index

  explicit HostLayout(const ClusterView& view);
  // The member of host position h that handles rank d's data: d itself on d's own host, else the
  // one whose local index is d's modulo the host's ranks (so a host's ranks share the work, and
  // rank i of every host meets rank i of the others where there is one).
  int holder(int h, int d) const;
  int nhosts() const { return static_cast<int>(hosts.size()); }
};

// Several hosts, one of them with several ranks, and every rank taking part.
bool hierarchical_applicable(const PlanRequest& request, const std::vector<int>& members);

}  // namespace dc
