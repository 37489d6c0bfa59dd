#include "compression/auto_choice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "compression/quantize.h"
#include "compression/select.h"

namespace dc::compression {
namespace {

constexpr uint64_t kSamples = 4096;
constexpr double kConcentrated = 0.5;
constexpr double kFlatEntropy = 6.0;

std::string format(const char* fmt, double a, double b, double c) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

}  // namespace

AutoChoice choose_auto(const AccumulatedView& in, uint64_t count, const Spec& spec) {
  AutoChoice choice;
  if (count == 0) {
    choice.reason = "q8: empty buffer";
    return choice;
  }
  // Scalar double arithmetic in a fixed order: every build and a GPU's host code agree.
  const uint64_t samples = std::min(count, kSamples);
  std::vector<float> mag;
  mag.reserve(samples);
  for (uint64_t j = 0; j < samples; ++j) {
    const float a = std::fabs(accumulated_at(in, sample_position(count, samples, j)));
    if (std::isfinite(a)) mag.push_back(a);
  }
  std::sort(mag.begin(), mag.end(), std::greater<float>());
  double total = 0, top = 0;
  const size_t top_count = (mag.size() + 99) / 100;
  for (size_t i = 0; i < mag.size(); ++i) {
    const double e = double(mag[i]) * double(mag[i]);
    total += e;
    if (i < top_count) top += e;
  }
  choice.top_energy = total > 0 ? top / total : 0.0;
  if (!mag.empty()) {
    const BlockScale s = block_scale(float_bits_of(mag[0]));
    uint64_t hist[wire::kQ8Max + 1] = {};
    for (float m : mag) hist[int32_t(clamp_q8(round_nearest(m * s.inv)))]++;
    for (uint64_t h : hist) {
      if (h == 0) continue;
      const double p = double(h) / double(mag.size());
      choice.q8_entropy -= p * std::log2(p);
    }
    choice.q8_entropy += 1.0;  // the sign
  }
  const double pct = 100.0 * choice.top_energy;
  if (choice.top_energy >= kConcentrated) {
    choice.sparse = true;
    choice.reason = format(
        "top-k: the largest 1%% of sampled magnitudes hold %.0f%% of the energy (>= %.0f%%); q8 would cost %.1f bits per element",
        pct, 100.0 * kConcentrated, choice.q8_entropy);
  } else if (spec.error_feedback && choice.q8_entropy >= kFlatEntropy) {
    choice.sparse = true;
    choice.reason = format(
        "top-k: flat magnitudes (q8 entropy %.1f bits >= %.0f, largest 1%% hold %.0f%% of the energy); error feedback carries the rest",
        choice.q8_entropy, kFlatEntropy, pct);
  } else {
    choice.reason = format(
        "q8: the largest 1%% of sampled magnitudes hold only %.0f%% of the energy (< %.0f%%); q8 costs %.1f bits per element",
        pct, 100.0 * kConcentrated, choice.q8_entropy);
  }
  return choice;
}

}  // namespace dc::compression
