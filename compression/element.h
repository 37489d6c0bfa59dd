// Reading float32, fp16 and bf16 elements as float32, and accumulating float32 into them (widen,
// add in float32, narrow to nearest even: as the project's reductions do). Internal linkage, like
// kernels/minifloat.h, because the codec loops are compiled once per instruction set.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/minifloat.h"

namespace dc::compression {

enum class ElemType : uint8_t { f32, f16, bf16 };

namespace {

DC_HOST_DEVICE constexpr uint32_t elem_size(ElemType t) { return t == ElemType::f32 ? 4 : 2; }

template <ElemType T>
DC_HOST_DEVICE inline float load_elem(const void* base, uint64_t i) {
  if constexpr (T == ElemType::f32) {
    return static_cast<const float*>(base)[i];
  } else if constexpr (T == ElemType::f16) {
    return kernels::half_to_float_inline(static_cast<const uint16_t*>(base)[i]);
  } else {
    return kernels::bf16_to_float_inline(static_cast<const uint16_t*>(base)[i]);
  }
}

template <ElemType T>
DC_HOST_DEVICE inline void accumulate_elem(void* base, uint64_t i, float v) {
  if constexpr (T == ElemType::f32) {
    static_cast<float*>(base)[i] += v;
  } else if constexpr (T == ElemType::f16) {
    uint16_t& h = static_cast<uint16_t*>(base)[i];
    h = kernels::float_to_half_inline(kernels::half_to_float_inline(h) + v);
  } else {
    uint16_t& b = static_cast<uint16_t*>(base)[i];
    b = kernels::float_to_bf16_inline(kernels::bf16_to_float_inline(b) + v);
  }
}

}  // namespace
}  // namespace dc::compression
