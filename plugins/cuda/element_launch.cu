// The element kernels: one __global__ template over the bodies of kernels/element_kernels.h,
// instantiated for every datatype x op, launched from the plugin's step descriptors.
#include "plugins/cuda/element_launch.h"

#include <cstring>
#include <string>

#include "kernels/element_kernels.h"
#include "plugins/cuda/cuda_check.h"

namespace dc::cuda {
namespace {

using namespace dc::kernels;

// No __launch_bounds__(kThreadsPerBlock): with it ptxas aims at full occupancy and spilled the
// 16 lanes of uint8 max and min on sm_90; without it each kernel takes the registers it needs
// (about 30-50), and load_element_kernels checks that kThreadsPerBlock threads still fit.
template <class Kernel>
__global__ void element_kernel(Kernel kernel, size_t n) {
  run_kernel(ThreadCoords{blockIdx.x, gridDim.x, threadIdx.x, blockDim.x}, kernel, n);
}

[[noreturn]] void refuse(const std::string& why) { fail(dcInvalidArgument, "DeepComm CUDA plugin: " + why); }

// Pointers of a step of no elements are not read.
template <class Bits>
void check_pointer(const void* p, const char* name, size_t n) {
  if (n == 0) return;
  if (!p) refuse(std::string("the step's ") + name + " is null");
  if (reinterpret_cast<uintptr_t>(p) % sizeof(Bits) != 0)
    refuse(std::string("the step's ") + name + " is not aligned to its " + std::to_string(sizeof(Bits)) +
           "-byte elements");
}

template <class Kernel>
void launch(const Kernel& kernel, size_t n, cudaStream_t stream, unsigned max_blocks) {
  const size_t items = work_items(kernel, n);
  if (items == 0) return;
  const size_t wanted = (items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const unsigned blocks = wanted < max_blocks ? unsigned(wanted) : max_blocks;
  element_kernel<Kernel><<<blocks, kThreadsPerBlock, 0, stream>>>(kernel, n);
  DC_CUDA_CHECK(cudaGetLastError());
}

template <class Fmt>
void launch_of_format(const dcDeviceStep_t& step, cudaStream_t stream, unsigned max_blocks) {
  using Bits = typename Fmt::Bits;
  auto* dst = static_cast<Bits*>(step.dst);
  const size_t n = step.count;
  check_pointer<Bits>(step.dst, "dst", n);
  switch (step.kind) {
    case dcDeviceStepReduce: {
      check_pointer<Bits>(step.src, "src", n);
      check_pointer<Bits>(step.src2, "src2", n);
      const auto* a = static_cast<const Bits*>(step.src);
      const auto* b = static_cast<const Bits*>(step.src2);
      const bool known = with_reduce_op(static_cast<dcRedOp_t>(step.op), [&](auto op) {
        launch(ReduceKernel<Fmt, decltype(op)>{dst, a, b}, n, stream, max_blocks);
      });
      if (!known) refuse("reduce with op " + std::to_string(step.op) + ", which is not a built-in op");
      return;
    }
    case dcDeviceStepPremultiply: {
      check_pointer<Bits>(step.src, "src", n);
      Bits scalar;
      std::memcpy(&scalar, step.scalar, sizeof scalar);
      return launch(PremultiplyKernel<Fmt>{dst, static_cast<const Bits*>(step.src), scalar}, n, stream, max_blocks);
    }
    case dcDeviceStepFinalizeAvg:
      if (step.divisor < 1) refuse("finalize of an average by " + std::to_string(step.divisor) + " ranks");
      return launch(FinalizeAvgKernel<Fmt>{dst, step.divisor}, n, stream, max_blocks);
    default: refuse("step kind " + std::to_string(step.kind) + " is not a kernel step");
  }
}

template <class Kernel>
void load(size_t* count) {
  cudaFuncAttributes attributes{};
  DC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, element_kernel<Kernel>));
  if (attributes.maxThreadsPerBlock < int(kThreadsPerBlock))
    fail(dcInternalError, "DeepComm CUDA plugin: an element kernel runs at most " +
                              std::to_string(attributes.maxThreadsPerBlock) + " threads per block, it needs " +
                              std::to_string(kThreadsPerBlock));
  ++*count;
}

}  // namespace

void launch_element_kernel(const dcDeviceStep_t& step, cudaStream_t stream, unsigned max_blocks) {
  const bool known = with_format(static_cast<dcDataType_t>(step.datatype),
                                 [&](auto fmt) { launch_of_format<decltype(fmt)>(step, stream, max_blocks); });
  if (!known) refuse("datatype " + std::to_string(step.datatype) + " is unknown");
}

size_t load_element_kernels() {
  size_t count = 0;
  for (int dt = 0; dt < dcNumTypes; ++dt) {
    with_format(static_cast<dcDataType_t>(dt), [&](auto fmt) {
      using Fmt = decltype(fmt);
      for (dcRedOp_t op : {dcSum, dcProd, dcMax, dcMin})
        with_reduce_op(op, [&](auto reduction) { load<ReduceKernel<Fmt, decltype(reduction)>>(&count); });
      load<PremultiplyKernel<Fmt>>(&count);
      load<FinalizeAvgKernel<Fmt>>(&count);
    });
  }
  return count;
}

}  // namespace dc::cuda
