#include "tools/calibrate/alpha_beta_fit.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dc::calibrate {
namespace {

std::optional<AlphaBetaFit> weighted_fit(const std::vector<FitPoint>& points) {
  double s = 0, sb = 0, sbb = 0, st = 0, sbt = 0;
  for (const FitPoint& p : points) {
    const double w = 1 / (p.seconds * p.seconds);
    s += w;
    sb += w * p.bytes;
    sbb += w * p.bytes * p.bytes;
    st += w * p.seconds;
    sbt += w * p.bytes * p.seconds;
  }
  const double det = s * sbb - sb * sb;
  if (!(det > 0) || !(sbb > 0)) return std::nullopt;
  AlphaBetaFit fit;
  fit.beta_s_per_byte = (s * sbt - sb * st) / det;
  fit.alpha_s = (st - fit.beta_s_per_byte * sb) / s;
  if (fit.alpha_s < 0) {  // through the origin instead
    fit.alpha_s = 0;
    fit.beta_s_per_byte = sbt / sbb;
  }
  if (!(fit.beta_s_per_byte > 0) || !std::isfinite(fit.beta_s_per_byte)) return std::nullopt;
  double sum = 0;
  for (const FitPoint& p : points) {
    const double r = (p.seconds - fit.alpha_s - fit.beta_s_per_byte * p.bytes) / p.seconds;
    sum += r * r;
  }
  fit.rms_relative_residual = std::sqrt(sum / static_cast<double>(points.size()));
  fit.points_used = static_cast<int>(points.size());
  return fit;
}

double relative_residual(const AlphaBetaFit& fit, const FitPoint& p) {
  return std::fabs(p.seconds - fit.alpha_s - fit.beta_s_per_byte * p.bytes) / p.seconds;
}

bool distinct_sizes(const std::vector<FitPoint>& points) {
  for (const FitPoint& p : points)
    if (p.bytes != points.front().bytes) return true;
  return false;
}

}  // namespace

std::optional<AlphaBetaFit> fit_alpha_beta(std::span<const FitPoint> points) {
  std::vector<FitPoint> usable;
  for (const FitPoint& p : points)
    if (p.seconds > 0 && std::isfinite(p.seconds) && p.bytes >= 0) usable.push_back(p);
  if (usable.size() < 2 || !distinct_sizes(usable)) return std::nullopt;
  const std::optional<AlphaBetaFit> first = weighted_fit(usable);
  if (!first) return std::nullopt;

  std::vector<double> residuals;
  for (const FitPoint& p : usable) residuals.push_back(relative_residual(*first, p));
  std::nth_element(residuals.begin(), residuals.begin() + residuals.size() / 2, residuals.end());
  const double limit = std::max(4 * residuals[residuals.size() / 2], 0.05);
  std::vector<FitPoint> kept;
  for (const FitPoint& p : usable)
    if (relative_residual(*first, p) <= limit) kept.push_back(p);
  if (kept.size() == usable.size() || kept.size() < 2 || !distinct_sizes(kept)) return first;
  return weighted_fit(kept);
}

}  // namespace dc::calibrate
