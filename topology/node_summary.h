// The compact description of one node that a rank publishes at communicator set-up, so that all
// ranks can build the same cluster view: host name, CPU counts, GPUs by PCI bus id, NICs with link
// layer, speed, state, nearest GPU and rail. Encoded as bytes; decoding validates everything, since
// the bytes come from the network.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "topology/node.h"

namespace dc::topo {

struct SummaryGpu {
  std::string pci_busid;
  int numa = -1;
  int nearest_nic = -1;  // index into NodeSummary::nics

  bool operator==(const SummaryGpu&) const = default;
};

struct SummaryNic {
  std::string name;
  std::string rdma_device;  // empty for a plain interface
  int port = 0;             // RDMA port, 0 for a plain interface
  std::string netdev;
  std::string pci_busid;  // empty for a virtual interface
  LinkLayer link_layer = LinkLayer::Unknown;
  LinkState state = LinkState::Unknown;
  uint32_t speed_mbps = 0;
  int numa = -1;
  int nearest_gpu = -1;  // index into NodeSummary::gpus
  NicPath gpu_path = NicPath::Unknown;
  int rail = -1;

  bool operator==(const SummaryNic&) const = default;
};

struct NodeSummary {
  std::string host;
  int packages = 0;  // 0: not known
  int numa_nodes = 0;
  int cores = 0;
  std::vector<SummaryGpu> gpus;
  std::vector<SummaryNic> nics;

  bool operator==(const NodeSummary&) const = default;
};

// Bounds every summary keeps (checked by check_summary and on decode).
constexpr size_t kMaxHostNameBytes = 255;
constexpr size_t kMaxDeviceNameBytes = 64;
constexpr size_t kMaxSummaryDevices = 1024;  // GPUs, and NICs, per node
constexpr int kMaxRail = 1023;
constexpr int kMaxCpuCount = 1 << 20;  // packages, NUMA nodes, cores; also the NUMA index bound

// A host or device name: 1..limit bytes of printable ASCII without spaces.
bool is_valid_name(std::string_view name, size_t limit);

NodeSummary summarize(const NodeTopology& node);

// Whether the node has an RDMA port (InfiniBand or RoCE) whose link is up: what makes the
// `auto` transport choice send between hosts through UCX.
bool has_active_rdma_port(const NodeSummary& summary);

// Empty when the summary is consistent; else what is wrong ("nics[2].rail: 3 is also nics[0]'s").
std::string check_summary(const NodeSummary& summary);

// Throws dc::Error (dcInvalidArgument) when the summary fails check_summary.
std::string encode_summary(const NodeSummary& summary);

// Throws dc::Error (dcInvalidArgument, "node summary: ...") on anything malformed: wrong magic,
// truncation, trailing bytes, out-of-range values or a summary that fails check_summary.
NodeSummary decode_summary(std::string_view bytes);

}  // namespace dc::topo
