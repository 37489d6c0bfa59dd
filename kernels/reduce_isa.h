// Entry points of the reduction loops, one set per instruction set (reduce_loops.inc compiled with
// that set's flags). reduce.cpp validates arguments and picks the set the CPU supports.
#pragma once

#include <cstddef>

#include "deepcomm/deepcomm.h"

#define DC_DECLARE_KERNEL_ISA(isa)                                                               \
  namespace dc::kernels::isa {                                                                   \
  void reduce(dcDataType_t dt, dcRedOp_t op, void* dst, const void* a, const void* b, size_t n); \
  void finalize_avg(dcDataType_t dt, void* buf, size_t n, int nranks);                           \
  void premultiply(dcDataType_t dt, void* dst, const void* src, size_t n, const void* scalar);   \
  }

DC_DECLARE_KERNEL_ISA(baseline)
#if defined(DEEPCOMM_KERNELS_AVX2)
DC_DECLARE_KERNEL_ISA(avx2)
#endif

#undef DC_DECLARE_KERNEL_ISA

namespace dc::kernels {
bool cpu_supports_avx2();  // AVX2 and F16C, with the OS saving YMM state
const char* active_isa();  // "avx2" or "baseline": the set reduce() & co. use
}  // namespace dc::kernels
