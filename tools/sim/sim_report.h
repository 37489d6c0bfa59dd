// deepcomm-sim's output: the cluster priced and one row per collective, size and algorithm, as
// text or as one JSON object.
#pragma once

#include <string>
#include <vector>

#include "tools/sim/sim_rows.h"

namespace dc::tools {

std::string sim_report(const ClusterView& cluster, const std::string& topo_file, const std::vector<SimRow>& rows,
                       bool json);

}  // namespace dc::tools
