// What one source (hwloc, or sysfs) reports about network hardware, before NICs are formed, and
// the merge of both sources into the node's NIC list.
#pragma once

#include <string>
#include <vector>

#include "topology/node.h"

namespace dc::topo {

struct RdmaPortFacts {
  std::string device;  // "mlx5_0"
  int port = 0;        // 1-based
  std::string pci_busid;
  LinkLayer link_layer = LinkLayer::Unknown;
  LinkState state = LinkState::Unknown;
  uint32_t speed_mbps = 0;
  std::string netdev;  // the interface bound to the port, where the source says (RoCE GID table)
};

struct NetdevFacts {
  std::string name;  // "ib0"
  std::string pci_busid;
  std::string rdma_device;  // the RDMA device of the same PCI function, if any
  int port = 0;             // its RDMA port, 0 when not known
  LinkLayer link_layer = LinkLayer::Unknown;
  LinkState state = LinkState::Unknown;
  uint32_t speed_mbps = 0;
};

struct NicFacts {
  std::vector<RdmaPortFacts> ports;
  std::vector<NetdevFacts> netdevs;
};

// One NIC per RDMA port (named "<device>:<port>", with the interface bound to it) and one per
// remaining interface, sorted by PCI bus id (virtual interfaces last), then name. Where both
// sources describe the same port or interface, a value sysfs knows wins over hwloc's. An
// interface is bound to a port when a source names it for the port, when it reports the same
// device and port, or when the device has one port and this is its only interface of unknown port.
// Localities are left empty: the caller attaches them by PCI bus id.
std::vector<Nic> merge_nic_facts(const NicFacts& hwloc, const NicFacts& sysfs);

}  // namespace dc::topo
