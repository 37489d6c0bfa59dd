// The simulated cluster a tool prices: H hosts with R ranks each in block placement, with the
// network tiers, groups and rails of a topology file when one is given (default tiers otherwise).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "topology/cluster_view.h"
#include "topology/topology_file.h"

namespace dc::tools {

constexpr int kMaxSimulatedHosts = 4096;
constexpr int kMaxRanksPerHost = 8;

struct Layout {
  int hosts = 0;  // 0: the hosts the file names
  int ranks_per_host = 8;
  bool shared_memory = true;
  std::optional<topo::TopologyFile> file;
};

// The hosts a file names, in the view's numbering: its distinct host names (in groups and host
// entries, in order of appearance) are hosts 0, 1, ...; host indices and index ranges extend the
// count past them. Hosts without a name in the file are called "host<index>".
std::vector<std::string> host_names(const topo::TopologyFile& file);

// Throws dc::Error (dcInvalidArgument) with a message for the user: no hosts, more than
// kMaxSimulatedHosts, more than kMaxRanksPerHost, or a file that does not fit the layout (or names
// an unknown collective or algorithm in a tuning rule).
std::shared_ptr<const ClusterView> simulated_cluster(const Layout& layout);

}  // namespace dc::tools
