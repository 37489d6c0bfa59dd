// ClusterView::build: hosts from the ranks' host identities, each host's node from its first
// rank's summary (or, simulated, from the topology file's entry), and the network tiers with their
// groups from the topology file.
#include <algorithm>
#include <map>

#include "base/error.h"
#include "topology/cluster_view.h"

namespace dc {

namespace {

int count_rails(const topo::NodeSummary& node) {
  int rails = 0;
  for (const topo::SummaryNic& nic : node.nics) rails += nic.rail >= 0;
  return rails > 0 ? rails : 1;
}

std::string group_path(size_t tier, size_t group) {
  return "tiers[" + std::to_string(tier) + "].groups[" + std::to_string(group) + "]";
}

}  // namespace

std::shared_ptr<const ClusterView> ClusterView::build(const ClusterInputs& in) {
  if (in.host_ids.empty()) fail(dcInvalidArgument, "cluster view: no ranks");
  if (!in.nodes.empty() && in.nodes.size() != in.host_ids.size())
    fail(dcInternalError, "cluster view: " + std::to_string(in.nodes.size()) + " node summaries for " +
                              std::to_string(in.host_ids.size()) + " ranks");
  auto view = std::shared_ptr<ClusterView>(new ClusterView());
  std::map<std::string, int> index;
  for (const std::string& id : in.host_ids)
    view->host_of_.push_back(index.emplace(id, static_cast<int>(index.size())).first->second);
  view->place_ranks();
  view->shared_memory_ = in.shared_memory;
  view->receives_in_place_ = in.receives_in_place && !in.shared_memory;
  view->intra_host_ = in.shared_memory ? default_shared_memory_tier() : default_loopback_tier();
  view->memory_bandwidth_ = default_memory_bandwidth();
  view->rank_memory_bandwidth_ = default_rank_memory_bandwidth();

  const topo::TopologyFile* file = in.file;
  for (int h = 0; h < view->nhosts(); ++h) {
    Host& host = view->hosts_[h];
    const int first = host.ranks.front();
    if (in.nodes.empty()) {
      // Simulated: the file's entry describes the host.
      const std::string name = in.host_ids[first];
      const topo::HostEntry* entry = file ? topo::find_host_entry(*file, name, static_cast<uint32_t>(h)) : nullptr;
      if (entry) host.node = entry->node;
      host.node.host = name;
    } else {
      host.node = in.nodes[first];
      const topo::HostEntry* entry =
          file ? topo::find_host_entry(*file, host.node.host, static_cast<uint32_t>(h)) : nullptr;
      if (entry) topo::apply_host_entry(host.node, *entry, file->source);
    }
    host.rails = count_rails(host.node);
  }

  const std::vector<topo::Tier> no_tiers;
  const std::vector<topo::Tier>& tiers = file ? file->tiers : no_tiers;
  for (const topo::Tier& tier : tiers) view->network_.push_back(link_tier_of(tier));
  if (file) view->tuning_ = file->tuning;
  // Hosts no tier joins talk over the default network.
  if (tiers.empty() || !tiers.back().groups.empty()) view->network_.push_back(default_network_tier());
  for (Host& host : view->hosts_) host.tier_group.assign(view->network_.size(), 0);
  for (size_t t = 0; t < tiers.size(); ++t) {
    if (tiers[t].groups.empty()) continue;
    for (Host& host : view->hosts_) host.tier_group[t] = -1;
    std::vector<int> path_of(view->nhosts(), -1);  // the group that took each host
    auto take = [&](int h, size_t g, int line) {
      Host& host = view->hosts_[h];
      if (host.tier_group[t] >= 0 && host.tier_group[t] != static_cast<int>(g))
        fail(dcInvalidArgument, "topology file " + file->source + ":" + std::to_string(line) + ": " + group_path(t, g) +
                                    ": host " + std::to_string(h) + " (" + host.node.host + ") is also in " +
                                    group_path(t, static_cast<size_t>(path_of[h])));
      host.tier_group[t] = static_cast<int>(g);
      path_of[h] = static_cast<int>(g);
    };
    for (size_t g = 0; g < tiers[t].groups.size(); ++g) {
      for (const topo::HostRef& ref : tiers[t].groups[g].hosts) {
        if (!ref.name.empty()) {
          for (int h = 0; h < view->nhosts(); ++h)
            if (view->hosts_[h].node.host == ref.name) take(h, g, ref.line);
        } else {
          const uint64_t end = std::min<uint64_t>(uint64_t{ref.first} + ref.count, view->nhosts());
          for (uint64_t h = ref.first; h < end; ++h) take(static_cast<int>(h), g, ref.line);
        }
      }
    }
  }
  view->finish();
  return view;
}

}  // namespace dc
