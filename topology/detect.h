// Detects the node this process runs on, or the machine an hwloc XML export describes.
#pragma once

#include <string>

#include "topology/node.h"

namespace dc::topo {

struct DetectOptions {
  // An hwloc XML export to read instead of the live machine. Empty: DEEPCOMM_TOPO_XML, else
  // hwloc's own HWLOC_XMLFILE, else the live machine.
  std::string xml_path;
  // The directory standing for /sys, read for NIC link layer, speed and state. Empty:
  // DEEPCOMM_SYSFS_ROOT, else /sys on the live machine and nothing for an XML export (its NICs
  // are not this machine's).
  std::string sysfs_root;
  // Empty: gethostname() on the live machine; for an export, its HostName, else the file's name
  // without its extension.
  std::string hostname;
};

// True when the library was built with hwloc. Without it detection has no CPU topology or PCI
// information: the node has only its host name, processor count and the NICs sysfs lists.
bool hwloc_available();

// Throws dc::Error (dcInvalidArgument) when an export cannot be read, or when one is asked for
// and the library was built without hwloc.
NodeTopology detect_node(const DetectOptions& options = {});

}  // namespace dc::topo
