// Words that many threads of a kernel update at once: an OR of flags, and a minimum (the first
// error by a key). Atomic on the GPU and on the CPU, so the emulator's threads (and
// ThreadSanitizer) see no data race either.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace dc::compression::gpu {
namespace {

DC_HOST_DEVICE inline void raise_flags(uint32_t* word, uint32_t flags) {
#if defined(__CUDA_ARCH__)
  atomicOr(word, flags);
#else
  __atomic_fetch_or(word, flags, __ATOMIC_RELAXED);
#endif
}

DC_HOST_DEVICE inline void count_up(uint32_t* word, uint32_t n) {
#if defined(__CUDA_ARCH__)
  atomicAdd(word, n);
#else
  __atomic_fetch_add(word, n, __ATOMIC_RELAXED);
#endif
}

DC_HOST_DEVICE inline void lower_to(uint64_t* word, uint64_t value) {
#if defined(__CUDA_ARCH__)
  atomicMin(reinterpret_cast<unsigned long long*>(word), static_cast<unsigned long long>(value));
#else
  uint64_t seen = __atomic_load_n(word, __ATOMIC_RELAXED);
  while (value < seen && !__atomic_compare_exchange_n(word, &seen, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
#endif
}

}  // namespace
}  // namespace dc::compression::gpu
