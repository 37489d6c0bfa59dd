#include "topology/detect.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "topology/nic_choice.h"
#include "topology/nic_facts.h"
#include "topology/settings.h"
#include "topology/sysfs_nics.h"
#ifdef DEEPCOMM_HAVE_HWLOC
#include "topology/hwloc_reader.h"
#endif

namespace dc::topo {
namespace {

std::string first_set(const std::string& given, const config::Setting& setting) {
  if (!given.empty()) return given;
  return config::text(setting).value_or("");
}

std::string local_hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

}  // namespace

bool hwloc_available() {
#ifdef DEEPCOMM_HAVE_HWLOC
  return true;
#else
  return false;
#endif
}

NodeTopology detect_node(const DetectOptions& options) {
  const std::string xml = first_set(options.xml_path, settings::kTopoXml);
  NodeTopology node;
  NicFacts hwloc_facts;
  bool this_system = true;
#ifdef DEEPCOMM_HAVE_HWLOC
  HwlocMachine machine = read_hwloc_machine(xml);
  this_system = machine.this_system;
  node.source = machine.source;
  node.packages = machine.packages;
  node.numa_nodes = machine.numa_nodes;
  node.cores = machine.cores;
  node.pus = machine.pus;
  node.gpus = std::move(machine.gpus);
  hwloc_facts = std::move(machine.nic_facts);
  node.hostname = machine.hostname;
  if (node.hostname.empty() && !this_system) {
    const char* env_xml = std::getenv("HWLOC_XMLFILE");
    node.hostname = std::filesystem::path(!xml.empty() ? xml : env_xml != nullptr ? env_xml : "").stem().string();
  }
#else
  if (!xml.empty()) {
    fail(dcInvalidArgument, "cannot read the hwloc XML export " + xml + ": DeepComm was built without hwloc");
  }
  node.source = "no hwloc";
  const long pus = sysconf(_SC_NPROCESSORS_ONLN);
  node.pus = pus > 0 ? static_cast<int>(pus) : 0;
#endif
  if (!options.hostname.empty()) node.hostname = options.hostname;
  if (node.hostname.empty()) node.hostname = local_hostname();

  std::string sysfs_root = first_set(options.sysfs_root, settings::kSysfsRoot);
  if (sysfs_root.empty() && this_system) sysfs_root = "/sys";
  const NicFacts sysfs_facts = sysfs_root.empty() ? NicFacts{} : read_sysfs_nic_facts(sysfs_root);
  node.nics = merge_nic_facts(hwloc_facts, sysfs_facts);
#ifdef DEEPCOMM_HAVE_HWLOC
  for (Nic& nic : node.nics) {
    auto place = machine.pci.find(nic.pci_busid);
    if (place == machine.pci.end()) continue;
    nic.locality = place->second.locality;
    nic.numa = place->second.numa;
  }
#endif
  choose_nearest_nics(node);
  return node;
}

}  // namespace dc::topo
