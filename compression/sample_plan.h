// The sampled top-k's sample (select.cpp on the CPU, topk_select.h on the GPU): how many
// elements, which ones, and the rank among them that sets the threshold.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "compression/rng.h"
#include "kernels/host_device.h"

namespace dc::compression {

struct SamplePlan {
  uint64_t samples;
  uint64_t rank;  // the threshold is the rank-th largest sampled magnitude; 0 when rank >= samples
};

namespace {

// About 32 sampled elements above the k-th largest (k/count of the sample), within 256 ..
// count/16 samples. The threshold aims at 4k candidates, and at no fewer than the 32nd largest
// sample (a lower rank varies too much), so that a sample rarely leaves fewer than k: too many
// candidates cost little, the scan cuts them as they come. Host only (the plan is an argument of
// the GPU's stages), in double as both encoders compute it.
inline SamplePlan sample_plan(uint64_t count, uint64_t k) {
  const double fraction = double(k) / double(count);
  const uint64_t want = uint64_t(std::ceil(32.0 / fraction));
  const uint64_t samples = std::min(count, std::max<uint64_t>(256, std::min(want, count / 16)));
  const uint64_t rank = std::max<uint64_t>(32, uint64_t(std::ceil(4.0 * fraction * double(samples))));
  return {samples, rank};
}

// Position of sample j out of `samples` of `count` elements: one per stride, at a hashed offset
// inside it (a fixed stride could line up with a matrix's rows).
DC_HOST_DEVICE inline uint64_t sample_position(uint64_t count, uint64_t samples, uint64_t j) {
  const uint64_t stride = count / samples;
  return j * stride + mix32(uint32_t(j)) % stride;
}

}  // namespace
}  // namespace dc::compression
