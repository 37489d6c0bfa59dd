#include "plugins/cuda/cuda_queue.h"

#include <algorithm>

#include "plugins/cuda/codec_launch.h"
#include "plugins/cuda/cuda_check.h"
#include "plugins/cuda/element_launch.h"

namespace dc::cuda {
namespace {

// Makes a device current on the calling thread for a scope, and restores the thread's own.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) : device_(device) {
    DC_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device_) DC_CUDA_CHECK(cudaSetDevice(device_));
  }
  ~DeviceGuard() {
    if (previous_ != device_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int device_;
  int previous_ = 0;
};

// A driver and a device, or the error that says which is missing.
void require_a_device() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  const std::string why = std::string(" (cudaGetDeviceCount: ") + cudaGetErrorName(error) + ")";
  if (error == cudaErrorInsufficientDriver)
    fail(dcSystemError, "DeepComm CUDA plugin: no CUDA driver: libcuda.so.1 is absent or older than the CUDA " +
                            std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10) +
                            " runtime the plugin was built with" + why);
  if (error == cudaErrorNoDevice || (error == cudaSuccess && count == 0))
    fail(dcSystemError, "DeepComm CUDA plugin: no CUDA device: the driver sees no GPU" + why);
  DC_CUDA_CHECK(error);
}

}  // namespace

CudaQueue::CudaQueue() {
  require_a_device();
  DC_CUDA_CHECK(cudaGetDevice(&device_));
  int sms = 0, threads_per_sm = 0;
  DC_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_));
  DC_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device_));
  max_blocks_ = unsigned(sms * std::max(1, threads_per_sm / int(kThreadsPerBlock)));
  load_element_kernels();
  load_codec_kernels();
  DC_CUDA_CHECK(cudaStreamCreateWithFlags(&own_stream_, cudaStreamNonBlocking));
}

CudaQueue::~CudaQueue() {
  for (const Pending& p : pending_) cudaEventDestroy(p.done);
  for (cudaEvent_t e : free_events_) cudaEventDestroy(e);
  cudaStreamDestroy(own_stream_);
}

void CudaQueue::post(const dcDeviceStep_t& step, uint64_t stream_handle, uint64_t tag) {
  DeviceGuard guard(device_);
  cudaStream_t stream = stream_handle ? reinterpret_cast<cudaStream_t>(stream_handle) : own_stream_;
  // The event first, so that failing to get one never refuses a step whose work is enqueued.
  const cudaEvent_t done = take_event();
  try {
    if (step.kind == dcDeviceStepCopy) copy(step, stream);
    else launch_element_kernel(step, stream, max_blocks_);
    DC_CUDA_CHECK(cudaEventRecord(done, stream));
  } catch (...) {
    std::lock_guard lock(mutex_);
    free_events_.push_back(done);
    throw;
  }
  std::lock_guard lock(mutex_);
  pending_.push_back(Pending{tag, done});
}

// Overlapping ranges (allowed by the contract) go through a staging buffer: cudaMemcpyAsync's
// ranges must not overlap.
void CudaQueue::copy(const dcDeviceStep_t& step, cudaStream_t stream) {
  const size_t bytes = step.count;
  if (bytes == 0 || step.dst == step.src) return;
  if (!step.dst || !step.src) fail(dcInvalidArgument, "DeepComm CUDA plugin: a copy's dst or src is null");
  const auto d = reinterpret_cast<uintptr_t>(step.dst), s = reinterpret_cast<uintptr_t>(step.src);
  if (d < s + bytes && s < d + bytes) {
    void* staging = nullptr;
    DC_CUDA_CHECK(cudaMallocAsync(&staging, bytes, stream));
    DC_CUDA_CHECK(cudaMemcpyAsync(staging, step.src, bytes, cudaMemcpyDefault, stream));
    DC_CUDA_CHECK(cudaMemcpyAsync(step.dst, staging, bytes, cudaMemcpyDefault, stream));
    DC_CUDA_CHECK(cudaFreeAsync(staging, stream));
    return;
  }
  DC_CUDA_CHECK(cudaMemcpyAsync(step.dst, step.src, bytes, cudaMemcpyDefault, stream));
}

cudaEvent_t CudaQueue::take_event() {
  {
    std::lock_guard lock(mutex_);
    if (!free_events_.empty()) {
      const cudaEvent_t e = free_events_.back();
      free_events_.pop_back();
      return e;
    }
  }
  cudaEvent_t e = nullptr;
  DC_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

int32_t CudaQueue::poll(dcDeviceCompletion_t* out, int32_t max) {
  std::lock_guard lock(mutex_);
  messages_.clear();
  int32_t n = 0;
  while (n < max && !pending_.empty()) {
    const Pending p = pending_.front();
    const cudaError_t error = cudaEventQuery(p.done);
    if (error == cudaErrorNotReady) break;
    pending_.pop_front();
    free_events_.push_back(p.done);
    out[n] = dcDeviceCompletion_t{p.tag, dcSuccess, nullptr};
    if (error != cudaSuccess) {
      messages_.push_back(std::string("DeepComm CUDA plugin: a step failed on the device: ") + cudaGetErrorName(error) +
                          " (" + cudaGetErrorString(error) + ")");
      out[n].result = dcUnhandledCudaError;
      out[n].message = messages_.back().c_str();
    }
    ++n;
  }
  return n;
}

}  // namespace dc::cuda
