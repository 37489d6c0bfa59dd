// What a topology file's host entry changes in a node's summary.
#include "base/error.h"
#include "topology/topology_file.h"

namespace dc::topo {
namespace {

template <typename T>
void take_known(T& into, const T& from, const T& unknown) {
  if (from != unknown) into = from;
}

}  // namespace

const HostEntry* find_host_entry(const TopologyFile& file, std::string_view host, uint32_t host_index) {
  const HostEntry* by_index = nullptr;
  const HostEntry* any = nullptr;
  for (const HostEntry& entry : file.hosts) {
    if (entry.index < 0 && entry.name == host) return &entry;
    if (entry.index == static_cast<int64_t>(host_index)) by_index = &entry;
    if (entry.index < 0 && entry.name == "*") any = &entry;
  }
  return by_index != nullptr ? by_index : any;
}

void apply_host_entry(NodeSummary& target, const HostEntry& entry, const std::string& source) {
  NodeSummary node = target;  // changed only when the whole entry applies
  auto fail_line = [&](int line, const std::string& what) {
    fail(dcInvalidArgument, "topology file " + source + ":" + std::to_string(line) + ": " + what);
  };
  const NodeSummary& given = entry.node;
  take_known(node.packages, given.packages, 0);
  take_known(node.numa_nodes, given.numa_nodes, 0);
  take_known(node.cores, given.cores, 0);

  // Indices in the entry refer to its own lists; map them to the node's.
  std::vector<int> nic_of(given.nics.size(), -1);
  for (size_t i = 0; i < given.nics.size(); ++i) {
    for (size_t n = 0; n < node.nics.size(); ++n) {
      if (node.nics[n].name == given.nics[i].name) nic_of[i] = static_cast<int>(n);
    }
    if (nic_of[i] < 0) fail_line(entry.nic_lines[i], "host " + node.host + " has no NIC " + given.nics[i].name);
  }
  std::vector<int> gpu_of(given.gpus.size(), -1);
  for (size_t i = 0; i < given.gpus.size(); ++i) {
    for (size_t g = 0; g < node.gpus.size(); ++g) {
      if (node.gpus[g].pci_busid == given.gpus[i].pci_busid) gpu_of[i] = static_cast<int>(g);
    }
    if (gpu_of[i] < 0) fail_line(entry.gpu_lines[i], "host " + node.host + " has no GPU " + given.gpus[i].pci_busid);
  }

  bool rails_given = false;
  for (const SummaryNic& n : given.nics) rails_given = rails_given || n.rail >= 0;
  if (rails_given) {
    for (SummaryNic& n : node.nics) n.rail = -1;
  }
  for (size_t i = 0; i < given.nics.size(); ++i) {
    const SummaryNic& from = given.nics[i];
    SummaryNic& into = node.nics[static_cast<size_t>(nic_of[i])];
    take_known(into.rdma_device, from.rdma_device, std::string());
    take_known(into.port, from.port, 0);
    take_known(into.netdev, from.netdev, std::string());
    take_known(into.pci_busid, from.pci_busid, std::string());
    take_known(into.link_layer, from.link_layer, LinkLayer::Unknown);
    take_known(into.state, from.state, LinkState::Unknown);
    take_known(into.speed_mbps, from.speed_mbps, 0u);
    take_known(into.numa, from.numa, -1);
    take_known(into.rail, from.rail, -1);
    if (from.nearest_gpu >= 0) into.nearest_gpu = gpu_of[static_cast<size_t>(from.nearest_gpu)];
    take_known(into.gpu_path, from.gpu_path, NicPath::Unknown);
  }
  for (size_t i = 0; i < given.gpus.size(); ++i) {
    const SummaryGpu& from = given.gpus[i];
    SummaryGpu& into = node.gpus[static_cast<size_t>(gpu_of[i])];
    take_known(into.numa, from.numa, -1);
    if (from.nearest_nic >= 0) into.nearest_nic = nic_of[static_cast<size_t>(from.nearest_nic)];
  }
  if (std::string problem = check_summary(node); !problem.empty()) {
    fail_line(entry.line, "host " + node.host + " after applying this entry: " + problem);
  }
  target = std::move(node);
}

}  // namespace dc::topo
