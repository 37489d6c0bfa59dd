// NIC facts from sysfs: RDMA ports (link layer, rate, state, bound interface) and network
// interfaces (type, speed, operstate, PCI function). The root stands for /sys, so tests point it at
// a fixture tree describing hardware this machine lacks.
#pragma once

#include <string>

#include "topology/nic_facts.h"

namespace dc::topo {

// Reads <root>/class/infiniband/<dev>/ports/<n>/{link_layer,rate,state,gid_attrs/ndevs/0},
// <root>/class/infiniband/<dev>/device/net/<if>/dev_port (which interface is on which port),
// <root>/class/net/<if>/{type,speed,operstate} and the PCI function behind each `device` link.
// Loopback interfaces are skipped, and so are virtual ones (no `device`) that are not up.
// A missing or unreadable root yields no facts; unreadable or malformed files leave a value unknown.
NicFacts read_sysfs_nic_facts(const std::string& root);

}  // namespace dc::topo
