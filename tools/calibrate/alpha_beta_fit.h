// The α-β fit of calibration: time = α + β·bytes through measured (bytes, seconds) points, each
// parameter from the sizes that matter for it.
//
// β: least squares on relative residuals ((t − a − β·b) / t, weights 1/t²) over the bandwidth
// sizes, those of at least 1/16 of the largest measured. Small and middle sizes would otherwise
// decide β: a link whose buffers or token bucket (tc tbf's burst) pass the first few hundred KiB at
// a far higher rate than it sustains looks fast on them. One robust pass follows: points whose
// relative residual exceeds max(4 × the median one, 5%) are dropped (a size disturbed by another
// process) and the rest refitted.
// α: the median of t − β·b over the latency sizes, those where β·b is under 10% of t (the median
// shrugs off a disturbed size); without any, the fitted line's intercept. α is kept ≥ 0.
// The residual reported is over every point, so a link the line does not describe shows.
#pragma once

#include <optional>
#include <span>

namespace dc::calibrate {

struct FitPoint {
  double bytes = 0;
  double seconds = 0;  // one message, one way
};

struct AlphaBetaFit {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
  double rms_relative_residual = 0;  // over every usable point
  int points_used = 0;               // in the β fit, after dropping outliers
};

// nullopt when fewer than two distinct bandwidth sizes (with positive times) remain or β ≤ 0.
std::optional<AlphaBetaFit> fit_alpha_beta(std::span<const FitPoint> points);

}  // namespace dc::calibrate
