// The model of one machine (node) as detection finds it: CPU counts, GPUs, NICs, where each sits
// on the PCI tree, and which NIC each GPU should use. Filled by detect_node() (detect.h); the
// compact form that ranks exchange is NodeSummary (node_summary.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dc::topo {

// How far a NIC is from a GPU, nearest first (NCCL's names in brackets):
//   SameSwitch  through one PCIe switch or bridge below the host bridge [PIX]
//   HostBridge  through several switches, or through the host bridge [PXB, PHB]
//   Socket      through the CPU, both under the same package [NODE]
//   System      across sockets (the inter-socket link) [SYS]
//   Unknown     one of them has no PCI locality (a virtual NIC, or no hwloc)
enum class NicPath : uint8_t { SameSwitch = 0, HostBridge = 1, Socket = 2, System = 3, Unknown = 4 };
enum class LinkLayer : uint8_t { Unknown = 0, InfiniBand = 1, Ethernet = 2 };
enum class LinkState : uint8_t { Unknown = 0, Up = 1, Down = 2 };

// Names used in the topology file, the summary and describe(): "switch", "host_bridge",
// "socket", "system", "unknown"; "infiniband", "ethernet", "unknown"; "up", "down", "unknown".
const char* nic_path_name(NicPath path);
const char* link_layer_name(LinkLayer layer);
const char* link_state_name(LinkState state);
std::optional<NicPath> parse_nic_path(std::string_view name);
std::optional<LinkLayer> parse_link_layer(std::string_view name);
std::optional<LinkState> parse_link_state(std::string_view name);

// Where a PCI device sits: its ancestors from the parent up to the machine, each named by an id
// unique within one detection. Empty when the device is not on a known PCI tree.
struct PciLocality {
  enum class HopKind : uint8_t { Bridge, HostBridge, Cpu };
  struct Hop {
    uint64_t id = 0;
    HopKind kind = HopKind::Cpu;
  };
  std::vector<Hop> up;
  int package = -1;  // logical index of the package it hangs under, -1 when not known
};

struct Gpu {
  std::string pci_busid;  // "0000:34:00.0"
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  std::string model;        // from the CUDA/NVML device or the PCI name, may be empty
  std::string cuda_device;  // "cuda0" where hwloc has CUDA OS devices
  std::string nvml_device;  // "nvml0" where hwloc has NVML OS devices
  int numa = -1;            // OS index of the local NUMA node, -1 when not exactly one
  PciLocality locality;
  int nearest_nic = -1;  // index into NodeTopology::nics, -1 when the node has none
};

// One network port: an RDMA port (InfiniBand or RoCE HCA port, named "mlx5_0:1") with the network
// interface bound to it, if any; or a plain network interface (named "eth0").
struct Nic {
  std::string name;
  std::string rdma_device;  // "mlx5_0"; empty for a plain interface
  int port = 0;             // RDMA port number (1-based); 0 when not an RDMA port
  std::string netdev;       // "ib0", "eth2"; empty when the port has no interface
  std::string pci_busid;    // empty for a virtual interface
  LinkLayer link_layer = LinkLayer::Unknown;
  LinkState state = LinkState::Unknown;
  uint32_t speed_mbps = 0;  // 0 when not known
  int numa = -1;
  PciLocality locality;
  int nearest_gpu = -1;                 // index into NodeTopology::gpus
  NicPath gpu_path = NicPath::Unknown;  // the path to that GPU
  int rail = -1;                        // see assign_rails() in nic_choice.h

  bool rdma() const { return !rdma_device.empty() && port > 0; }
};

struct GpuNicPath {
  NicPath path = NicPath::Unknown;
  int bridges = 0;  // PCI bridges the path crosses (host bridges included)
};

struct NodeTopology {
  std::string hostname;
  std::string source;  // "live machine", "hwloc XML <path>", "no hwloc"
  int packages = 0;    // 0: not known (built without hwloc)
  int numa_nodes = 0;
  int cores = 0;
  int pus = 0;
  std::vector<Gpu> gpus;                       // in PCI bus id order
  std::vector<Nic> nics;                       // PCI NICs in bus id order, then virtual ones by name
  std::vector<std::vector<GpuNicPath>> paths;  // [gpu][nic]
};

// A readable multi-line description of the node, for tools and logs.
std::string describe(const NodeTopology& node);

// "0000:34:00.0": domain, bus, device (up to 1f) and function (up to 7) in lowercase hex.
bool is_pci_busid(std::string_view text);

}  // namespace dc::topo
