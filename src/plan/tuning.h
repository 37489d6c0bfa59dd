// Tuning rules: the topology file's measured algorithm choices (deepcomm-tune writes them), which
// the selector follows where a rig does what the cost model cannot see (a token bucket that passes
// small bursts at wire speed, ranks queueing for too few cores). As in NCCL's tuner plugin
// configuration, the first rule that matches a call (collective, size range, host and rank counts)
// names its algorithm; a rule naming an algorithm the call cannot take (not applicable to these
// ranks, or left out by DEEPCOMM_ALGO) is passed over. Compressed all-reduces are not tuned.
#pragma once

#include <string>
#include <vector>

#include "src/plan/plan.h"
#include "src/plan/select.h"
#include "topology/topology_file.h"

namespace dc {

// Throws dc::Error(dcInvalidArgument) naming the file, line and field of the first rule whose
// collective is not one of DEEPCOMM_ALGO's (allreduce, allgather, ...) or whose algorithm that
// collective does not have.
void check_tuning_rules(const topo::TopologyFile& file);

// The index in `candidates` of the algorithm the first matching rule names, or -1 when none matches.
int tuned_candidate(const PlanRequest& request, const std::vector<PricedGenerator>& candidates);

}  // namespace dc
