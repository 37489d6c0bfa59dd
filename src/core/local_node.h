// What this process tells the others about its machine at set-up: the node detected once per
// process (hwloc and sysfs on the live machine, or the export DEEPCOMM_TOPO_XML names), summarized.
#pragma once

#include <string>

#include "topology/node_summary.h"

namespace dc {

// Detection that fails is not fatal: the summary then holds the host name alone, and a warning
// says why (the cost model then knows no rails for this host).
const topo::NodeSummary& local_node_summary();

// The summary as one card line (hex of encode_summary) and back; decoding throws dc::Error
// (dcInvalidArgument) on anything malformed.
std::string summary_to_card(const topo::NodeSummary& summary);
topo::NodeSummary summary_from_card(const std::string& text);

}  // namespace dc
