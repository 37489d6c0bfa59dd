// Picks the loop set: AVX2 where built and supported, else the baseline.
#include "compression/codec_isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "base/error.h"

namespace dc::compression {
namespace {

bool cpu_has_avx2_set() {
#if defined(DEEPCOMM_CODECS_AVX2)
  __builtin_cpu_init();  // may run before the constructors that would otherwise do it
  // F16C from CPUID leaf 1 (clang's __builtin_cpu_supports does not know it); the AVX2 check
  // covers the operating system saving the YMM registers.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  return f16c && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("sse4.2");
#else
  return false;
#endif
}

}  // namespace

bool isa_available(Isa isa) { return isa != Isa::avx2 || cpu_has_avx2_set(); }

const CodecKernels& codec_kernels(Isa isa) {
  static const bool avx2 = cpu_has_avx2_set();
  switch (isa) {
    case Isa::baseline: return baseline::kKernels;
    case Isa::avx2:
      if (!avx2) fail(dcInvalidArgument, "the AVX2 codec loops are not built or this CPU lacks AVX2/F16C/BMI2/SSE4.2");
      [[fallthrough]];
    case Isa::best:
#if defined(DEEPCOMM_CODECS_AVX2)
      if (avx2) return avx2::kKernels;
#endif
      return baseline::kKernels;
  }
  return baseline::kKernels;
}

}  // namespace dc::compression
