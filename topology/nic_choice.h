// Which NIC each GPU uses: paths between devices on the PCI tree, the nearest-NIC choice and the
// rail numbering. Pure functions of the node model, so fixtures and fake nodes test them alike.
#pragma once

#include "topology/node.h"

namespace dc::topo {

// The path between two PCI devices, from their localities. Let L be their lowest common ancestor:
// SameSwitch when L is a PCI bridge at most two levels above each device (device, downstream port,
// upstream port = one switch); HostBridge when L is a bridge further up or a host bridge; Socket
// when L is on the CPU side and both hang under the same package; System otherwise; Unknown when
// either locality is empty. `bridges` counts the bridges on the path (L included when a bridge).
GpuNicPath classify_path(const PciLocality& a, const PciLocality& b);

// Fills node.paths, each GPU's nearest_nic, each NIC's nearest_gpu/gpu_path, and rails.
//
// GPUs choose in PCI bus id order; for each GPU the NICs are ordered by
//   1. state: a NIC that is down comes last,
//   2. path class (SameSwitch first), 3. bridges crossed (fewer first),
//   4. NICs of an RDMA device (HCA ports, or an HCA's interfaces) before plain interfaces,
//   5. link speed (faster first),
//   6. GPUs that already chose the NIC (fewer first, so GPUs spread over equally near NICs),
//   7. NIC order (PCI bus id),
// and the first is taken. A NIC's nearest GPU is the one with the best (path, bridges, GPU order)
// among those with a known path; none (-1) when no path is known.
void choose_nearest_nics(NodeTopology& node);

// Rails number the NICs a host's ranks use, so that rail k of every host can form one inter-host
// ring: the NICs chosen by at least one GPU, in NIC order. On a node without GPUs: every PCI NIC
// that is not down, in NIC order. Other NICs get rail -1. A topology file may override (see
// apply_host_entry in topology_file.h). Called by choose_nearest_nics().
void assign_rails(NodeTopology& node);

}  // namespace dc::topo
