// deepcomm-topo's report: the machine, the cluster view of a layout, and per collective and size
// the chosen plan, its predicted time and the runner-up — as text or as JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "compression/form/spec.h"
#include "tools/common/file_cluster.h"
#include "topology/node.h"

namespace dc::tools {

struct TableOptions {
  Layout layout;  // hosts, ranks per host, shared memory, topology file
  uint64_t min_bytes = 8;
  uint64_t max_bytes = 1ull << 30;
  uint64_t factor = 4;
  bool json = false;
  std::optional<compression::Spec> compress;  // all-reduces priced compressed with this spec
};

std::string report(const topo::NodeTopology& node, const TableOptions& options);

}  // namespace dc::tools
