// The inputs the GPU codec tests run through both the CPU codec and the emulated kernels: the
// shapes of real gradients and their edge cases (heavy tails, mostly zeros, constants, NaN and
// infinities, denormals, tiny blocks below the scale floor) at lengths that are no multiple of any
// block or chunk, 0 and 1 included.
#pragma once

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "test_support.h"

namespace dc::compression::test {

struct GradientCase {
  std::string name;
  std::vector<float> values;
};

inline std::vector<GradientCase> gradient_matrix() {
  std::vector<GradientCase> cases;
  for (size_t n : {size_t(0), size_t(1), size_t(17), size_t(4095), size_t(4097), size_t(70001)}) {
    const std::string at = "_" + std::to_string(n);
    cases.push_back({"lognormal" + at, make_values(Dist::lognormal, n, 11 + n)});
    if (n < 4095) continue;
    cases.push_back({"laplace" + at, make_values(Dist::laplace, n, 12 + n)});
    std::vector<float> sparse(n, 0.0f);
    for (size_t i = 0; i < n; i += 97) sparse[i] = float(i % 13) * 1e-2f - 0.05f;
    cases.push_back({"mostly_zero" + at, sparse});
    cases.push_back({"constant" + at, std::vector<float>(n, 0.375f)});
    std::vector<float> odd = make_values(Dist::normal, n, 13 + n);
    odd[3] = std::numeric_limits<float>::quiet_NaN();
    odd[5] = std::bit_cast<float>(0xffa00001u);  // a negative NaN with a payload: sent as the canonical one
    odd[n / 2] = std::numeric_limits<float>::infinity();
    odd[n - 1] = -std::numeric_limits<float>::infinity();
    for (size_t i = 100; i < 400; ++i) odd[i] = std::numeric_limits<float>::denorm_min() * float(i);
    for (size_t i = 500; i < 800; ++i) odd[i] = 1e-35f * float(i % 7);  // below the block-scale floor
    odd[900] = std::numeric_limits<float>::max();
    odd[901] = -std::numeric_limits<float>::max();
    cases.push_back({"nonfinite_denormal_huge" + at, odd});
  }
  return cases;
}

}  // namespace dc::compression::test
