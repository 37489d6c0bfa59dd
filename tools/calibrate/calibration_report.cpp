#include "tools/calibrate/calibration_report.h"

#include <cmath>
#include <cstdio>

namespace dc::calibrate {
namespace {

std::string printf_string(const char* format, auto... args) {
  char line[256];
  std::snprintf(line, sizeof line, format, args...);
  return line;
}

double round_significant(double x, int digits) {
  if (x == 0) return 0;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(x)))));
  return std::round(x * scale) / scale;
}

}  // namespace

topo::TierCalibration calibration_of(const AlphaBetaFit& fit) {
  return {std::round(fit.alpha_s * 1e9) / 1e3, round_significant(fit.beta_s_per_byte * 1e9, 6)};
}

std::string format_table(const std::vector<TierResult>& results) {
  std::string out = printf_string("%-16s %-9s %5s %10s %12s %10s %9s %12s %10s\n", "tier", "ranks", "sizes", "alpha_us",
                                  "beta_ns/B", "GB/s", "resid_%", "model_a_us", "model_GB/s");
  for (const TierResult& r : results) {
    const std::string ranks = r.pair.leader < 0 ? "-" : printf_string("%d<->%d", r.pair.leader, r.pair.follower);
    // A bandwidth of 0 is unlimited: the model prices that tier's bytes as memory traffic.
    const std::string model_gbs =
        r.pair.model.bandwidth_Bps > 0 ? printf_string("%.3f", r.pair.model.bandwidth_Bps / 1e9) : "memory";
    if (!r.fit) {
      const char* why = r.pair.leader < 0 ? "no pair of ranks uses this tier: not measured"
                        : r.sizes < 2     ? "too few sizes measured to fit (raise --seconds)"
                                          : "no fit: time did not grow with size over the largest sizes (raise -e)";
      out += printf_string("%-16s %-9s %5d %s\n", r.pair.name.c_str(), ranks.c_str(), r.sizes, why);
      continue;
    }
    const topo::TierCalibration c = calibration_of(*r.fit);
    out += printf_string("%-16s %-9s %5d %10.3f %12.6f %10.3f %9.2f %12.3f %10s\n", r.pair.name.c_str(), ranks.c_str(),
                         r.sizes, c.alpha_us, c.beta_ns_per_byte, 1 / c.beta_ns_per_byte,
                         r.fit->rms_relative_residual * 100, r.pair.model.latency_s * 1e6, model_gbs.c_str());
  }
  return out;
}

topo::TopologyFile calibrated_file(const ClusterView& view, const std::vector<TierResult>& results, bool from_file) {
  topo::TopologyFile file = topo::topology_file_of(view);
  file.source = "calibration";
  std::vector<topo::Tier> tiers;
  for (topo::Tier& tier : file.tiers) {
    const TierResult* result = nullptr;
    for (const TierResult& r : results)
      if (r.pair.network_tier >= 0 && r.pair.name == tier.name) result = &r;
    if (result && result->fit) tier.calibration = calibration_of(*result->fit);
    if (tier.calibration || from_file) tiers.push_back(std::move(tier));
  }
  file.tiers = std::move(tiers);
  return file;
}

}  // namespace dc::calibrate
