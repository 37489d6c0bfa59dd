#include "src/plan/host_layout.h"

namespace dc {

HostLayout::HostLayout(const ClusterView& view) {
  std::vector<int> everyone(view.nranks());
  for (int r = 0; r < view.nranks(); ++r) everyone[r] = r;
  host_pos.assign(view.nranks(), -1);
  local.assign(view.nranks(), 0);
  std::vector<int> pos_of_host(view.nhosts(), -1);
  for (int r : view.topology_order(everyone)) {
    const int h = view.host_of(r);
    if (pos_of_host[h] < 0) {
      pos_of_host[h] = static_cast<int>(hosts.size());
      hosts.emplace_back();
    }
    host_pos[r] = pos_of_host[h];
    local[r] = static_cast<int>(hosts[pos_of_host[h]].size());
    hosts[pos_of_host[h]].push_back(r);
  }
}

int HostLayout::holder(int h, int d) const {
  if (host_pos[d] == h) return d;
  return hosts[h][local[d] % static_cast<int>(hosts[h].size())];
}

bool hierarchical_applicable(const PlanRequest& request, const std::vector<int>& members) {
  const ClusterView& view = *request.cluster;
  return static_cast<int>(members.size()) == view.nranks() && view.nhosts() >= 2 && view.max_ranks_per_host() >= 2;
}

}  // namespace dc
