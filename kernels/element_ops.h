// The element operations of the reductions, written once for the CPU loops (reduce_loops.inc)
// and the CUDA kernels (element_kernels.h): every function is DC_HOST_DEVICE, and nvcc compiles
// this header for sm_80 and sm_90 in the CUDA plugin (plugins/cuda/element_launch.cu), with its
// warnings as errors, so it stays device-clean.
//
// Per datatype: a format says how an element is stored (Bits) and computed (Compute), with
// widen1/narrow1 between the two: the identity for the types computed in directly, float32 for
// half, bfloat16 and fp8 (narrowing rounds to nearest even; fp8 saturates). Per op: Sum (also
// avg's and premulsum's reduction), Prod, Max, Min on the compute type; Avg's final division and
// PreMulSum's scaling. Integers wrap (computed unsigned) and avg truncates; min/max propagate NaN.
//
// Internal linkage, like minifloat.h: the CPU loops are compiled once per instruction set, and the
// linker must not merge those copies. Nothing here reads memory: loops and kernels do.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/host_device.h"
#include "kernels/minifloat.h"

namespace dc::kernels {
namespace {

// ---- Ops on the compute type ----
// The type an op computes in: unsigned for integers (wraps without UB), the type itself otherwise.
template <class T, bool = std::is_integral_v<T>>
struct WideOf {
  using type = T;
};
template <class T>
struct WideOf<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using Wide = typename WideOf<T>::type;

struct Sum {  // also avg and premulsum
  template <class T>
  DC_HOST_DEVICE static T apply(T a, T b) {
    return T(Wide<T>(a) + Wide<T>(b));
  }
};
struct Prod {
  template <class T>
  DC_HOST_DEVICE static T apply(T a, T b) {
    return T(Wide<T>(a) * Wide<T>(b));
  }
};
struct Max {  // a NaN in either operand wins
  template <class T>
  DC_HOST_DEVICE static T apply(T a, T b) {
    return (a > b || a != a) ? a : b;
  }
};
struct Min {
  template <class T>
  DC_HOST_DEVICE static T apply(T a, T b) {
    return (a < b || a != a) ? a : b;
  }
};

// avg's division by the number of ranks, once after the sum. Integers divide in 64 bits (nranks
// may not fit in T) and truncate toward zero, as C++ division does.
struct Avg {
  template <class T>
  using Divisor =
      std::conditional_t<std::is_integral_v<T>, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>, T>;
  template <class T>
  DC_HOST_DEVICE static Divisor<T> divisor(int nranks) {
    return Divisor<T>(nranks);
  }
  template <class T>
  DC_HOST_DEVICE static T apply(T v, Divisor<T> div) {
    return T(Divisor<T>(v) / div);
  }
};

// premulsum's scaling of the input by the rank's scalar, before the sum.
struct PreMulSum {
  template <class T>
  DC_HOST_DEVICE static T apply(T v, T scalar) {
    return Prod::apply(v, scalar);
  }
};

// ---- Formats: how an element is stored and computed ----
template <class T>
struct Native {
  using Bits = T;
  using Compute = T;
  DC_HOST_DEVICE static T widen1(T v) { return v; }
  DC_HOST_DEVICE static T narrow1(T v) { return v; }
};
struct Half {
  using Bits = uint16_t;
  using Compute = float;
  DC_HOST_DEVICE static float widen1(Bits v) { return half_to_float_inline(v); }
  DC_HOST_DEVICE static Bits narrow1(float f) { return float_to_half_inline(f); }
};
struct Bf16 {
  using Bits = uint16_t;
  using Compute = float;
  DC_HOST_DEVICE static float widen1(Bits v) { return bf16_to_float_inline(v); }
  DC_HOST_DEVICE static Bits narrow1(float f) { return float_to_bf16_inline(f); }
};
// fp8 narrows to a 32-bit code, which the CPU loops store to 32-bit lanes (see minifloat.h).
struct E4m3 {
  using Bits = uint8_t;
  using Compute = float;
  DC_HOST_DEVICE static float widen1(Bits v) { return fp8e4m3_to_float_inline(v); }
  DC_HOST_DEVICE static uint32_t narrow1(float f) { return float_to_fp8e4m3_inline(f); }
};
struct E5m2 {
  using Bits = uint8_t;
  using Compute = float;
  DC_HOST_DEVICE static float widen1(Bits v) { return fp8e5m2_to_float_inline(v); }
  DC_HOST_DEVICE static uint32_t narrow1(float f) { return float_to_fp8e5m2_inline(f); }
};

// ---- One stored element in, one out: what a kernel's thread does per element ----
template <class Fmt, class Op>
DC_HOST_DEVICE typename Fmt::Bits reduce_element(typename Fmt::Bits a, typename Fmt::Bits b) {
  return typename Fmt::Bits(Fmt::narrow1(Op::apply(Fmt::widen1(a), Fmt::widen1(b))));
}

template <class Fmt>
DC_HOST_DEVICE typename Fmt::Bits avg_element(typename Fmt::Bits v, int nranks) {
  using C = typename Fmt::Compute;
  return typename Fmt::Bits(Fmt::narrow1(Avg::apply(Fmt::widen1(v), Avg::divisor<C>(nranks))));
}

template <class Fmt>
DC_HOST_DEVICE typename Fmt::Bits premul_element(typename Fmt::Bits v, typename Fmt::Bits scalar) {
  return typename Fmt::Bits(Fmt::narrow1(PreMulSum::apply(Fmt::widen1(v), Fmt::widen1(scalar))));
}

}  // namespace
}  // namespace dc::kernels
