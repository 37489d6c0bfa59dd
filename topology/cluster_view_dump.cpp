// The cluster view written back in the topology file format.
#include <cmath>
#include <map>
#include <set>

#include "topology/cluster_view.h"

namespace dc::topo {

TopologyFile topology_file_of(const ClusterView& view) {
  TopologyFile file;
  file.source = "cluster view";
  for (int t = 0; t < view.network_tiers(); ++t) {
    const LinkTier& link = view.network_tier(t);
    Tier tier;
    tier.name = link.name;
    // To a millionth of the unit: what the model's parameters can mean, without float noise.
    tier.bandwidth_gbps = std::round(link.bandwidth_Bps * 8 / 1e3) / 1e6;
    tier.latency_us = std::round(link.latency_s * 1e12) / 1e6;
    tier.per_rail = link.per_rail;
    // The last tier joins every host; the others list their groups.
    if (t + 1 < view.network_tiers()) {
      std::map<int, HostGroup> groups;
      for (int h = 0; h < view.nhosts(); ++h) {
        const int g = view.tier_group(h, t);
        if (g >= 0) groups[g].hosts.push_back(HostRef{"", static_cast<uint32_t>(h), 1, 0});
      }
      for (auto& [g, group] : groups) tier.groups.push_back(std::move(group));
      if (tier.groups.empty()) continue;  // a tier that joins no host says nothing
    }
    file.tiers.push_back(std::move(tier));
  }
  // Hosts by name where every host has its own, else by index (namespaces of one machine share
  // its name).
  std::set<std::string> names;
  for (int h = 0; h < view.nhosts(); ++h) names.insert(view.host_name(h));
  const bool by_name = static_cast<int>(names.size()) == view.nhosts() && !names.count("");
  for (int h = 0; h < view.nhosts(); ++h) {
    HostEntry entry;
    if (by_name) entry.name = view.host_name(h);
    else entry.index = h;
    entry.node = view.node(h);
    file.hosts.push_back(std::move(entry));
  }
  file.tuning = view.tuning();
  return file;
}

}  // namespace dc::topo
