// Inputs and helpers shared by the compression tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "compression/compression.h"
#include "kernels/minifloat.h"

namespace dc::compression::test {

enum class Dist { normal, laplace, lognormal };

// Gradient-like values: normal, laplace (heavier tails) or signed lognormal (heavy tails).
inline std::vector<float> make_values(Dist dist, size_t n, uint64_t seed, float scale = 1e-3f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::exponential_distribution<double> expo(1.0);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    double x = 0;
    switch (dist) {
      case Dist::normal: x = normal(rng); break;
      case Dist::laplace: x = expo(rng) * ((rng() & 1) ? 1 : -1); break;
      case Dist::lognormal: x = std::exp(1.5 * normal(rng)) * ((rng() & 1) ? 1 : -1); break;
    }
    v[i] = float(x * scale);
  }
  return v;
}

// A buffer of one of the three element types holding `values` (rounded to the type).
struct TypedBuffer {
  dcDataType_t type;
  std::vector<uint8_t> bytes;

  TypedBuffer(dcDataType_t t, const std::vector<float>& values) : type(t), bytes(values.size() * size()) {
    for (size_t i = 0; i < values.size(); ++i) set(i, values[i]);
  }
  size_t size() const { return type == dcFloat32 ? 4 : 2; }
  size_t count() const { return bytes.size() / size(); }
  void* data() { return bytes.data(); }
  float get(size_t i) const {
    if (type == dcFloat32) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    return type == dcFloat16 ? kernels::half_to_float_inline(h) : kernels::bf16_to_float_inline(h);
  }
  void set(size_t i, float v) {
    if (type == dcFloat32) {
      std::memcpy(bytes.data() + 4 * i, &v, 4);
      return;
    }
    const uint16_t h = type == dcFloat16 ? kernels::float_to_half_inline(v) : kernels::float_to_bf16_inline(v);
    std::memcpy(bytes.data() + 2 * i, &h, 2);
  }
  std::vector<float> floats() const {
    std::vector<float> out(count());
    for (size_t i = 0; i < out.size(); ++i) out[i] = get(i);
    return out;
  }
};

inline const char* type_name(dcDataType_t t) { return t == dcFloat32 ? "f32" : t == dcFloat16 ? "f16" : "bf16"; }

// Encodes `values` (as `type`) with `spec`; returns the message, trimmed to its length.
inline std::vector<uint8_t> encode(const Spec& spec, TypedBuffer& in, Residual* residual = nullptr, uint64_t seed = 1,
                                   Isa isa = Isa::best, EncodeResult* result = nullptr) {
  std::vector<uint8_t> msg(max_message_bytes(spec, in.count()));
  Encoder encoder(isa);
  const EncodeResult r = encoder.encode(spec, in.type, in.data(), in.count(), residual, seed, msg);
  msg.resize(r.bytes);
  if (result) *result = r;
  return msg;
}

// Decodes into a float32 buffer of zeros.
inline std::vector<float> decode(const std::vector<uint8_t>& msg, size_t count, Isa isa = Isa::best) {
  std::vector<float> out(count, 0.0f);
  decode_accumulate(msg, {dcFloat32, out.data(), count}, isa);
  return out;
}

inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

}  // namespace dc::compression::test

namespace dc::compression::test {

// The reference top-k: indices of the k largest |a|, ties to the lower index, sorted by index.
inline std::vector<uint32_t> reference_topk(const std::vector<float>& a, uint64_t k) {
  std::vector<uint32_t> idx(a.size());
  for (uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](uint32_t x, uint32_t y) {
    const float ax = std::fabs(a[x]), ay = std::fabs(a[y]);
    return ax != ay ? ax > ay : x < y;
  });
  idx.resize(std::min<uint64_t>(k, idx.size()));
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace dc::compression::test
