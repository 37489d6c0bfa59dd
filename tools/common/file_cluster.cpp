#include "tools/common/file_cluster.h"

#include <algorithm>
#include <set>

#include "base/error.h"
#include "src/plan/tuning.h"

namespace dc::tools {

std::vector<std::string> host_names(const topo::TopologyFile& file) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  uint64_t indexed = 0;  // one past the highest host index the file names
  auto name = [&](const std::string& n) {
    if (seen.insert(n).second) names.push_back(n);
  };
  for (const topo::Tier& tier : file.tiers)
    for (const topo::HostGroup& group : tier.groups)
      for (const topo::HostRef& ref : group.hosts) {
        if (!ref.name.empty()) name(ref.name);
        else indexed = std::max<uint64_t>(indexed, uint64_t{ref.first} + ref.count);
      }
  for (const topo::HostEntry& entry : file.hosts) {
    if (entry.index >= 0) indexed = std::max<uint64_t>(indexed, static_cast<uint64_t>(entry.index) + 1);
    else if (entry.name != "*") name(entry.name);
  }
  // Capped so that a file naming host 1000000 gives "too many hosts", not a huge list.
  const uint64_t count = std::min<uint64_t>(std::max<uint64_t>(indexed, names.size()), kMaxSimulatedHosts + 1);
  for (uint64_t h = names.size(); h < count; ++h) names.push_back("host" + std::to_string(h));
  return names;
}

std::shared_ptr<const ClusterView> simulated_cluster(const Layout& layout) {
  std::vector<std::string> names;
  if (layout.file) {
    check_tuning_rules(*layout.file);
    names = host_names(*layout.file);
  }
  int hosts = layout.hosts;
  if (hosts == 0) {
    if (names.empty())
      fail(dcInvalidArgument, layout.file ? "topology file " + layout.file->source + " names no hosts: give --hosts"
                                          : std::string("no hosts: give --hosts or --topo-file"));
    hosts = static_cast<int>(names.size());
  }
  if (hosts < 1 || hosts > kMaxSimulatedHosts)
    fail(dcInvalidArgument, std::to_string(hosts) + " hosts: at least 1 and at most " +
                                std::to_string(kMaxSimulatedHosts) + " can be simulated");
  if (layout.ranks_per_host < 1 || layout.ranks_per_host > kMaxRanksPerHost)
    fail(dcInvalidArgument, std::to_string(layout.ranks_per_host) + " ranks per host: at least 1 and at most " +
                                std::to_string(kMaxRanksPerHost));
  ClusterInputs in;
  for (int h = 0; h < hosts; ++h) {
    const std::string id = h < static_cast<int>(names.size()) ? names[h] : "host" + std::to_string(h);
    in.host_ids.insert(in.host_ids.end(), layout.ranks_per_host, id);
  }
  in.file = layout.file ? &*layout.file : nullptr;
  in.shared_memory = layout.shared_memory;
  return ClusterView::build(in);
}

}  // namespace dc::tools
