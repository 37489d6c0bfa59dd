// Compiles element_ops.h as device code for every datatype and op (nvcc, sm_80 and sm_90, see
// CMakeLists.txt), so that the header stays device-clean until the CUDA plugin's kernels use it.
// Nothing launches these kernels: element_kernels() takes their addresses, which makes nvcc
// generate each one.
#include <cstddef>
#include <cstdint>

#include "kernels/element_ops.h"

namespace dc::kernels {
namespace {

template <class Fmt, class Op>
__global__ void reduce_kernel(typename Fmt::Bits* dst, const typename Fmt::Bits* a, const typename Fmt::Bits* b,
                              size_t n) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = reduce_element<Fmt, Op>(a[i], b[i]);
}

template <class Fmt>
__global__ void avg_kernel(typename Fmt::Bits* buf, size_t n, int nranks) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) buf[i] = avg_element<Fmt>(buf[i], nranks);
}

template <class Fmt>
__global__ void premul_kernel(typename Fmt::Bits* dst, const typename Fmt::Bits* src, size_t n,
                              typename Fmt::Bits scalar) {
  const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = premul_element<Fmt>(src[i], scalar);
}

}  // namespace

// Six kernels per datatype (sum, prod, max, min, avg's division, premulsum's scaling), for the
// datatypes of dcDataType_t in its order.
const void* const* element_kernels() {
#define DC_KERNELS_OF(Fmt)                                                                                           \
  reinterpret_cast<const void*>(&reduce_kernel<Fmt, Sum>), reinterpret_cast<const void*>(&reduce_kernel<Fmt, Prod>), \
      reinterpret_cast<const void*>(&reduce_kernel<Fmt, Max>),                                                       \
      reinterpret_cast<const void*>(&reduce_kernel<Fmt, Min>), reinterpret_cast<const void*>(&avg_kernel<Fmt>),      \
      reinterpret_cast<const void*>(&premul_kernel<Fmt>)
  static const void* const kernels[] = {DC_KERNELS_OF(Native<int8_t>),
                                        DC_KERNELS_OF(Native<uint8_t>),
                                        DC_KERNELS_OF(Native<int32_t>),
                                        DC_KERNELS_OF(Native<uint32_t>),
                                        DC_KERNELS_OF(Native<int64_t>),
                                        DC_KERNELS_OF(Native<uint64_t>),
                                        DC_KERNELS_OF(Half),
                                        DC_KERNELS_OF(Native<float>),
                                        DC_KERNELS_OF(Native<double>),
                                        DC_KERNELS_OF(Bf16),
                                        DC_KERNELS_OF(E4m3),
                                        DC_KERNELS_OF(E5m2)};
#undef DC_KERNELS_OF
  return kernels;
}

}  // namespace dc::kernels
