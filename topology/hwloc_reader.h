// Reads a machine through hwloc 2.x (the live machine or an XML export): CPU counts, NVIDIA GPUs,
// the NIC facts hwloc has (OpenFabrics and network OS devices), and where every PCI device sits.
// Compiled only when hwloc is found (DEEPCOMM_HAVE_HWLOC).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "topology/nic_facts.h"
#include "topology/node.h"

namespace dc::topo {

struct PciPlace {
  PciLocality locality;
  int numa = -1;
};

struct HwlocMachine {
  std::string source;    // "live machine", "hwloc XML <path>"
  std::string hostname;  // the export's HostName, empty when it has none or on a live machine
  bool this_system = true;
  int packages = 0;
  int numa_nodes = 0;
  int cores = 0;
  int pus = 0;
  std::vector<Gpu> gpus;  // localities and NUMA filled, in PCI bus id order
  NicFacts nic_facts;
  std::map<std::string, PciPlace> pci;  // every PCI device hwloc kept, by bus id
};

// xml_path empty: the live machine, unless hwloc's own HWLOC_XMLFILE names an export.
// Throws dc::Error (dcInvalidArgument) when the export cannot be read.
HwlocMachine read_hwloc_machine(const std::string& xml_path);

}  // namespace dc::topo
