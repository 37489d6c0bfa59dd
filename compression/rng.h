// Counter-based uniform numbers for stochastic rounding: a hash of (seed, element index), so the
// number of any element is known without the ones before it (a GPU thread computes its own) and
// the bytes do not depend on how the work is split. 32-bit multiplies only, which vectorize.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace dc::compression {

// The two 32-bit keys a seed expands to.
struct RoundingKey {
  uint32_t lo, hi;
};

namespace {

// Chris Wellons' "lowbias32" integer hash (a bijection with good avalanche).
DC_HOST_DEVICE inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// splitmix64 of the seed, split in two keys.
DC_HOST_DEVICE inline RoundingKey rounding_key(uint64_t seed) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return {uint32_t(z), uint32_t(z >> 32)};
}

// The key of the elements whose index has this high half (chunks never straddle a multiple of
// 2^32, so a loop over a block computes it once).
DC_HOST_DEVICE inline uint32_t index_key(RoundingKey key, uint32_t index_hi) {
  return mix32(index_hi ^ key.hi) ^ key.lo;
}

// Uniform in [0, 1) with 24 random bits, for the element whose index has this low half.
DC_HOST_DEVICE inline float uniform01(uint32_t index_key, uint32_t index_lo) {
  return float(int32_t(mix32(index_lo ^ index_key) >> 8)) * 0x1p-24f;
}

DC_HOST_DEVICE inline float uniform01(RoundingKey key, uint64_t index) {
  return uniform01(index_key(key, uint32_t(index >> 32)), uint32_t(index));
}

}  // namespace
}  // namespace dc::compression
