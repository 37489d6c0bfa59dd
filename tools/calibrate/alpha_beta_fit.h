// The α-β fit of calibration: time = α + β·bytes through measured (bytes, seconds) points.
//
// Least squares on relative residuals ((t − α − β·b) / t, i.e. weights 1/t²): the points span
// microseconds to hundreds of milliseconds, and plain least squares would let the largest sizes
// decide α alone (often making it negative). Relative weights make every size count alike, so α is
// set by the small messages and β by the large ones. Then one robust pass: points whose relative
// residual exceeds max(4 × the median one, 5%) are dropped (a size disturbed by another process)
// and the rest refitted. α is kept ≥ 0 (a fit through the origin when the free fit would give a
// negative α); a fit whose β is not positive fails.
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
  double rms_relative_residual = 0;  // over the points used
  int points_used = 0;
};

// nullopt when fewer than two distinct sizes (with positive times) remain or β ≤ 0.
std::optional<AlphaBetaFit> fit_alpha_beta(std::span<const FitPoint> points);

}  // namespace dc::calibrate
