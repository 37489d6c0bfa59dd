#include "topology/hwloc_reader.h"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/error.h"

namespace dc::topo {
namespace {

constexpr unsigned kNvidiaVendor = 0x10de;
constexpr unsigned kClassVga = 0x0300;
constexpr unsigned kClass3d = 0x0302;

class Topology {
 public:
  Topology() {
    if (hwloc_topology_init(&topo_) != 0) fail(dcSystemError, "hwloc: cannot create a topology");
  }
  ~Topology() { hwloc_topology_destroy(topo_); }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  hwloc_topology_t get() const { return topo_; }

 private:
  hwloc_topology_t topo_ = nullptr;
};

std::string busid_of(const hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  char text[16];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%01x", static_cast<unsigned>(a.domain) & 0xffff, a.bus, a.dev & 0x1f,
                a.func & 0x7);
  return text;
}

bool starts_with(const char* text, const char* prefix) {
  return text != nullptr && std::strncmp(text, prefix, std::strlen(prefix)) == 0;
}

std::string info(hwloc_obj_t obj, const char* name) {
  const char* value = hwloc_obj_get_info_by_name(obj, name);
  return value != nullptr ? value : "";
}

PciPlace place_of(hwloc_topology_t topo, hwloc_obj_t obj, int packages) {
  PciPlace place;
  for (hwloc_obj_t a = obj->parent; a != nullptr; a = a->parent) {
    using HopKind = PciLocality::HopKind;
    HopKind kind = HopKind::Cpu;
    if (a->type == HWLOC_OBJ_BRIDGE) {
      kind = a->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST ? HopKind::HostBridge : HopKind::Bridge;
    }
    place.locality.up.push_back({a->gp_index, kind});
  }
  hwloc_obj_t cpu_side = hwloc_get_non_io_ancestor_obj(topo, obj);
  hwloc_obj_t package = cpu_side->type == HWLOC_OBJ_PACKAGE
                            ? cpu_side
                            : hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, cpu_side);
  // Above the packages (attached to the machine) on a one-package machine is still that package.
  if (package != nullptr) {
    place.locality.package = static_cast<int>(package->logical_index);
  } else if (packages == 1) {
    place.locality.package = 0;
  }
  if (cpu_side->nodeset != nullptr && hwloc_bitmap_weight(cpu_side->nodeset) == 1) {
    place.numa = hwloc_bitmap_first(cpu_side->nodeset);
  }
  return place;
}

// An IB device reports each port's state as "Port<N>State" (the IB port state number).
void add_rdma_ports(hwloc_obj_t osdev, const std::string& busid, NicFacts& facts) {
  for (unsigned i = 0; i < osdev->infos_count; ++i) {
    const char* name = osdev->infos[i].name;
    unsigned port = 0;
    int consumed = 0;
    if (std::sscanf(name, "Port%uState%n", &port, &consumed) != 1 || name[consumed] != '\0' || port == 0 ||
        port > 255) {
      continue;
    }
    RdmaPortFacts p;
    p.device = osdev->name;
    p.port = static_cast<int>(port);
    p.pci_busid = busid;
    const int state = std::atoi(osdev->infos[i].value);
    p.state = state == 4 || state == 5   ? LinkState::Up
              : state >= 1 && state <= 3 ? LinkState::Down
                                         : LinkState::Unknown;
    facts.ports.push_back(std::move(p));
  }
}

// The hardware address tells the link layer: 20 bytes for IPoIB, 6 for Ethernet.
LinkLayer layer_from_address(const std::string& address) {
  if (address.empty()) return LinkLayer::Unknown;
  size_t bytes = 1;
  for (char ch : address) bytes += ch == ':' ? 1 : 0;
  return bytes == 20 ? LinkLayer::InfiniBand : bytes == 6 ? LinkLayer::Ethernet : LinkLayer::Unknown;
}

void read_pci_device(hwloc_topology_t topo, hwloc_obj_t pci, HwlocMachine& machine) {
  const std::string busid = busid_of(pci);
  const PciPlace place = place_of(topo, pci, machine.packages);
  machine.pci[busid] = place;

  std::vector<hwloc_obj_t> fabrics, netdevs;
  std::string cuda, nvml, gpu_model;
  for (hwloc_obj_t child = pci->io_first_child; child != nullptr; child = child->next_sibling) {
    if (child->type != HWLOC_OBJ_OS_DEVICE || child->name == nullptr) continue;
    switch (child->attr->osdev.type) {
      case HWLOC_OBJ_OSDEV_OPENFABRICS: fabrics.push_back(child); break;
      case HWLOC_OBJ_OSDEV_NETWORK: netdevs.push_back(child); break;
      case HWLOC_OBJ_OSDEV_GPU:
      case HWLOC_OBJ_OSDEV_COPROC:
        if (starts_with(child->name, "cuda")) cuda = child->name;
        if (starts_with(child->name, "nvml")) nvml = child->name;
        if ((!cuda.empty() || !nvml.empty()) && gpu_model.empty()) gpu_model = info(child, "GPUModel");
        break;
      default: break;
    }
  }

  const auto& attr = pci->attr->pcidev;
  const bool nvidia_display =
      attr.vendor_id == kNvidiaVendor && (attr.class_id == kClassVga || attr.class_id == kClass3d);
  if (nvidia_display || !cuda.empty() || !nvml.empty()) {
    Gpu gpu;
    gpu.pci_busid = busid;
    gpu.vendor_id = attr.vendor_id;
    gpu.device_id = attr.device_id;
    gpu.model = gpu_model.empty() ? info(pci, "PCIDevice") : gpu_model;
    gpu.cuda_device = cuda;
    gpu.nvml_device = nvml;
    gpu.numa = place.numa;
    gpu.locality = place.locality;
    machine.gpus.push_back(std::move(gpu));
  }

  for (hwloc_obj_t fabric : fabrics) add_rdma_ports(fabric, busid, machine.nic_facts);
  for (hwloc_obj_t netdev : netdevs) {
    NetdevFacts d;
    d.name = netdev->name;
    d.pci_busid = busid;
    // An interface beside exactly one RDMA device belongs to it; hwloc's "Port" is 1-based.
    if (fabrics.size() == 1) {
      d.rdma_device = fabrics[0]->name;
      const int port = std::atoi(info(netdev, "Port").c_str());
      d.port = port > 0 && port <= 255 ? port : 0;
    }
    d.link_layer = layer_from_address(info(netdev, "Address"));
    machine.nic_facts.netdevs.push_back(std::move(d));
  }
}

}  // namespace

HwlocMachine read_hwloc_machine(const std::string& xml_path) {
  Topology topo;
  hwloc_topology_set_io_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (!xml_path.empty() && hwloc_topology_set_xml(topo.get(), xml_path.c_str()) != 0) {
    fail(dcInvalidArgument, "hwloc cannot use the XML export " + xml_path + ": " + std::strerror(errno));
  }
  if (hwloc_topology_load(topo.get()) != 0) {
    const int err = errno;
    const char* env_xml = std::getenv("HWLOC_XMLFILE");
    const std::string what = !xml_path.empty()    ? "the XML export " + xml_path
                             : env_xml != nullptr ? std::string("the XML export ") + env_xml + " (HWLOC_XMLFILE)"
                                                  : std::string("this machine's topology");
    fail(dcInvalidArgument, "hwloc cannot load " + what + ": " + std::strerror(err));
  }

  HwlocMachine machine;
  machine.this_system = hwloc_topology_is_thissystem(topo.get()) != 0;
  if (!xml_path.empty()) {
    machine.source = "hwloc XML " + xml_path;
  } else if (!machine.this_system && std::getenv("HWLOC_XMLFILE") != nullptr) {
    machine.source = std::string("hwloc XML ") + std::getenv("HWLOC_XMLFILE") + " (HWLOC_XMLFILE)";
  } else {
    machine.source = machine.this_system ? "live machine" : "hwloc (not this system)";
  }
  if (!machine.this_system) machine.hostname = info(hwloc_get_root_obj(topo.get()), "HostName");
  machine.packages = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_PACKAGE);
  machine.numa_nodes = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_NUMANODE);
  machine.cores = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_CORE);
  machine.pus = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_PU);

  for (hwloc_obj_t pci = hwloc_get_next_pcidev(topo.get(), nullptr); pci != nullptr;
       pci = hwloc_get_next_pcidev(topo.get(), pci)) {
    read_pci_device(topo.get(), pci, machine);
  }
  std::sort(machine.gpus.begin(), machine.gpus.end(),
            [](const Gpu& a, const Gpu& b) { return a.pci_busid < b.pci_busid; });
  return machine;
}

}  // namespace dc::topo
