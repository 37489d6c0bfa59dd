// Public reduction entry points: validate, then run the loops of the best instruction set this
// CPU supports (chosen once).
#include "kernels/reduce.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <string>

#include "base/error.h"
#include "kernels/reduce_isa.h"

namespace dc {
namespace kernels {
namespace {

struct KernelSet {
  const char* name;
  decltype(&baseline::reduce) reduce;
  decltype(&baseline::finalize_avg) finalize_avg;
  decltype(&baseline::premultiply) premultiply;
};

KernelSet pick_kernel_set() {
#if defined(DEEPCOMM_KERNELS_AVX2)
  if (cpu_supports_avx2()) return {"avx2", avx2::reduce, avx2::finalize_avg, avx2::premultiply};
#endif
  return {"baseline", baseline::reduce, baseline::finalize_avg, baseline::premultiply};
}

const KernelSet& kernel_set() {
  static const KernelSet set = pick_kernel_set();
  return set;
}

void check_datatype(dcDataType_t dt) {
  if (datatype_size(dt) == 0) fail(dcInvalidArgument, "unknown datatype " + std::to_string(dt));
}

}  // namespace

bool cpu_supports_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();  // may run before the constructors that would otherwise do it
  // F16C by cpuid: clang's __builtin_cpu_supports does not know "f16c".
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
  return __builtin_cpu_supports("avx2") && f16c;
#else
  return false;
#endif
}

const char* active_isa() { return kernel_set().name; }

}  // namespace kernels

void reduce(dcDataType_t dt, dcRedOp_t op, void* dst, const void* a, const void* b, size_t count) {
  kernels::check_datatype(dt);
  if (op < 0 || op >= dcNumOps) fail(dcInvalidArgument, "not a built-in op: " + std::to_string(op));
  kernels::kernel_set().reduce(dt, op, dst, a, b, count);
}

void finalize_avg(dcDataType_t dt, void* buf, size_t count, int nranks) {
  kernels::check_datatype(dt);
  if (nranks < 1) fail(dcInvalidArgument, "avg over " + std::to_string(nranks) + " ranks");
  kernels::kernel_set().finalize_avg(dt, buf, count, nranks);
}

void premultiply(dcDataType_t dt, void* dst, const void* src, size_t count, const void* scalar) {
  kernels::check_datatype(dt);
  kernels::kernel_set().premultiply(dt, dst, src, count, scalar);
}

}  // namespace dc
