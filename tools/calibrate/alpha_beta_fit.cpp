#include "tools/calibrate/alpha_beta_fit.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dc::calibrate {
namespace {

struct Line {
  double intercept = 0;
  double slope = 0;
};

// Least squares on relative residuals.
std::optional<Line> relative_fit(const std::vector<FitPoint>& points) {
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
  if (!(det > 0)) return std::nullopt;
  const double slope = (s * sbt - sb * st) / det;
  return Line{(st - slope * sb) / s, slope};
}

double relative_residual(const Line& line, const FitPoint& p) {
  return std::fabs(p.seconds - line.intercept - line.slope * p.bytes) / p.seconds;
}

bool distinct_sizes(const std::vector<FitPoint>& points) {
  for (const FitPoint& p : points)
    if (p.bytes != points.front().bytes) return true;
  return false;
}

double median(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

// The relative fit, then once more without the points far off it.
std::optional<Line> robust_fit(const std::vector<FitPoint>& points, int* used) {
  const std::optional<Line> first = relative_fit(points);
  if (!first) return std::nullopt;
  std::vector<double> residuals;
  for (const FitPoint& p : points) residuals.push_back(relative_residual(*first, p));
  const double limit = std::max(4 * median(residuals), 0.05);
  std::vector<FitPoint> kept;
  for (const FitPoint& p : points)
    if (relative_residual(*first, p) <= limit) kept.push_back(p);
  *used = static_cast<int>(points.size());
  if (kept.size() == points.size() || kept.size() < 2 || !distinct_sizes(kept)) return first;
  *used = static_cast<int>(kept.size());
  return relative_fit(kept);
}

}  // namespace

std::optional<AlphaBetaFit> fit_alpha_beta(std::span<const FitPoint> points) {
  std::vector<FitPoint> usable;
  double largest = 0;
  for (const FitPoint& p : points)
    if (p.seconds > 0 && std::isfinite(p.seconds) && p.bytes >= 0 && std::isfinite(p.bytes)) {
      usable.push_back(p);
      largest = std::max(largest, p.bytes);
    }
  std::vector<FitPoint> bandwidth;
  for (const FitPoint& p : usable)
    if (p.bytes >= largest / 16) bandwidth.push_back(p);
  if (bandwidth.size() < 2 || !distinct_sizes(bandwidth)) return std::nullopt;
  AlphaBetaFit fit;
  const std::optional<Line> line = robust_fit(bandwidth, &fit.points_used);
  if (!line || !(line->slope > 0) || !std::isfinite(line->slope)) return std::nullopt;
  fit.beta_s_per_byte = line->slope;

  std::vector<double> latency;
  for (const FitPoint& p : usable)
    if (fit.beta_s_per_byte * p.bytes < 0.1 * p.seconds) latency.push_back(p.seconds - fit.beta_s_per_byte * p.bytes);
  fit.alpha_s = std::max(0.0, latency.empty() ? line->intercept : median(latency));

  double sum = 0;
  for (const FitPoint& p : usable) {
    const double r = relative_residual({fit.alpha_s, fit.beta_s_per_byte}, p);
    sum += r * r;
  }
  fit.rms_relative_residual = std::sqrt(sum / static_cast<double>(usable.size()));
  return fit;
}

}  // namespace dc::calibrate
