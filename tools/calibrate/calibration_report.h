// What calibration hands back: a table of the fitted tiers, and the cluster's topology file (the
// DEEPCOMM_TOPO_DUMP_FILE format) with each measured network tier's `calibration` filled.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/calibrate/alpha_beta_fit.h"
#include "tools/calibrate/tier_pairs.h"
#include "topology/cluster_view.h"
#include "topology/topology_file.h"

namespace dc::calibrate {

struct TierResult {
  TierPair pair;
  int sizes = 0;                    // sizes measured
  std::optional<AlphaBetaFit> fit;  // nullopt: not measured, or no fit
};

// One row per tier: name, pair, sizes, α µs, β ns/B, implied GB/s, RMS relative residual, and the
// model's α and GB/s at init (from the built-in defaults or DEEPCOMM_TOPO_FILE); a tier without a
// fit says why.
std::string format_table(const std::vector<TierResult>& results);

// The file's α (µs, 3 decimals) and β (ns/B, 6 significant digits) of a fit.
topo::TierCalibration calibration_of(const AlphaBetaFit& fit);

// topo::topology_file_of(view) with the fitted network tiers' calibration set. A network tier left
// unmeasured keeps what a loaded topology file declared (from_file) and is left out otherwise (it
// is only the built-in default). The tier inside a host has no place in the format.
topo::TopologyFile calibrated_file(const ClusterView& view, const std::vector<TierResult>& results, bool from_file);

}  // namespace dc::calibrate
