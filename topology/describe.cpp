// describe(): the detected node as text, one line per GPU and per NIC.
#include <cstdio>

#include "topology/node.h"

namespace dc::topo {
namespace {

std::string speed_text(uint32_t mbps) {
  if (mbps == 0) return "speed unknown";
  char text[32];
  std::snprintf(text, sizeof text, "%g Gb/s", mbps / 1000.0);
  return text;
}

std::string count(size_t n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

std::string numa_text(int numa) { return numa >= 0 ? "NUMA " + std::to_string(numa) : "NUMA ?"; }

std::string layer_text(const Nic& nic) {
  if (nic.rdma() && nic.link_layer == LinkLayer::Ethernet) return "RoCE";
  if (nic.link_layer == LinkLayer::InfiniBand) return "InfiniBand";
  if (nic.link_layer == LinkLayer::Ethernet) return "Ethernet";
  return "link layer unknown";
}

}  // namespace

std::string describe(const NodeTopology& node) {
  std::string out = "host " + node.hostname + " (" + node.source + ")\n";
  if (node.packages > 0) {
    out += "  " + count(node.packages, "package") + ", " + count(node.numa_nodes, "NUMA node") + ", " +
           count(node.cores, "core") + ", " + count(node.pus, "PU") + "\n";
  } else {
    out += "  " + count(node.pus, "processor") + " (no CPU topology)\n";
  }
  out += "  GPUs: " + std::to_string(node.gpus.size()) + "\n";
  for (size_t g = 0; g < node.gpus.size(); ++g) {
    const Gpu& gpu = node.gpus[g];
    char ids[16];
    std::snprintf(ids, sizeof ids, "[%04x:%04x]", gpu.vendor_id, gpu.device_id);
    out += "    gpu" + std::to_string(g) + "  " + gpu.pci_busid + "  " + ids;
    if (!gpu.model.empty()) out += "  " + gpu.model;
    if (!gpu.cuda_device.empty()) out += "  " + gpu.cuda_device;
    if (!gpu.nvml_device.empty()) out += "  " + gpu.nvml_device;
    out += "  " + numa_text(gpu.numa);
    if (gpu.nearest_nic >= 0) {
      const GpuNicPath& p = node.paths[g][static_cast<size_t>(gpu.nearest_nic)];
      out += "  -> " + node.nics[static_cast<size_t>(gpu.nearest_nic)].name + " (" + nic_path_name(p.path) + ", " +
             count(p.bridges, "bridge") + ")";
    }
    out += "\n";
  }
  out += "  NICs: " + std::to_string(node.nics.size()) + "\n";
  for (const Nic& nic : node.nics) {
    out += "    " + nic.name;
    if (!nic.netdev.empty() && nic.netdev != nic.name) out += " (" + nic.netdev + ")";
    if (!nic.rdma() && !nic.rdma_device.empty()) out += " (on " + nic.rdma_device + ")";
    out += "  " + (nic.pci_busid.empty() ? std::string("virtual") : nic.pci_busid);
    out += "  " + layer_text(nic) + "  " + speed_text(nic.speed_mbps) + "  " + link_state_name(nic.state) + "  " +
           numa_text(nic.numa);
    out += nic.rail >= 0 ? "  rail " + std::to_string(nic.rail) : std::string("  no rail");
    if (nic.nearest_gpu >= 0) {
      out += "  nearest gpu" + std::to_string(nic.nearest_gpu) + " (" + nic_path_name(nic.gpu_path) + ")";
    }
    out += "\n";
  }
  return out;
}

}  // namespace dc::topo
