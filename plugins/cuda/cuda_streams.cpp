#include "plugins/cuda/cuda_streams.h"

#include <unistd.h>

#include <atomic>
#include <string>

#include "base/error.h"
#include "plugins/cuda/cuda_check.h"

namespace dc::cuda {
namespace {

// The driver API version whose signatures the entry points are looked up with.
constexpr int kDriverApiVersion = 12000;

template <class Fn>
Fn driver_entry(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  DC_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, kDriverApiVersion, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr)
    fail(dcSystemError, std::string("DeepComm CUDA plugin: the driver has no ") + name);
  return reinterpret_cast<Fn>(fn);
}

void check_driver(CUresult result, const char* call) {
  if (result != CUDA_SUCCESS)
    fail(dcUnhandledCudaError, std::string("DeepComm CUDA plugin: ") + call + " failed with CUresult " +
                                   std::to_string(static_cast<int>(result)));
}

// A host function on the stream: tells the bridge's thread that a doorbell rang.
void write_wake_fd(void* fd) {
  const uint64_t one = 1;
  // Only EAGAIN can fail (the counter full), and then the descriptor is readable anyway.
  [[maybe_unused]] ssize_t n = write(static_cast<int>(reinterpret_cast<intptr_t>(fd)), &one, sizeof one);
}

}  // namespace

CudaStreams::CudaStreams() {
  using DeviceGet = CUresult (*)(CUdevice*, int);
  using DeviceGetAttribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  int ordinal = 0;
  DC_CUDA_CHECK(cudaGetDevice(&ordinal));
  CUdevice device = 0;
  check_driver(driver_entry<DeviceGet>("cuDeviceGet")(&device, ordinal), "cuDeviceGet");
  int memops = 0;
  check_driver(driver_entry<DeviceGetAttribute>("cuDeviceGetAttribute")(
                   &memops, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, device),
               "cuDeviceGetAttribute");
  if (!memops)
    fail(dcSystemError,
         "DeepComm CUDA plugin: the device has no 64-bit stream memory operations, which the stream "
         "bridge's doorbells and gates need");
  write_value_ = driver_entry<WriteValue64>("cuStreamWriteValue64");
  wait_value_ = driver_entry<WaitValue64>("cuStreamWaitValue64");
}

void* CudaStreams::alloc_pinned(size_t bytes) {
  void* pointer = nullptr;
  // A captured operation allocates while its stream captures; in global mode an allocation would
  // invalidate the capture (as NCCL does, the thread switches to relaxed mode for it).
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  DC_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  const cudaError_t allocated =
      cudaHostAlloc(&pointer, bytes == 0 ? 1 : bytes, cudaHostAllocPortable | cudaHostAllocMapped);
  DC_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  DC_CUDA_CHECK(allocated);
  return pointer;
}

void CudaStreams::free_pinned(void* pointer) { DC_CUDA_CHECK(cudaFreeHost(pointer)); }

void* CudaStreams::alloc_device(size_t bytes) {
  void* pointer = nullptr;
  DC_CUDA_CHECK(cudaMalloc(&pointer, bytes == 0 ? 1 : bytes));
  return pointer;
}

void CudaStreams::free_device(void* pointer) { DC_CUDA_CHECK(cudaFree(pointer)); }

bool CudaStreams::is_device_memory(const void* pointer) const {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();  // not CUDA's memory: do not leave the error to the program
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

void CudaStreams::enqueue_copy(cudaStream_t stream, void* dst, const void* src, size_t bytes) {
  if (bytes > 0) DC_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
}

void CudaStreams::enqueue_doorbell(cudaStream_t stream, uint64_t* word, uint64_t value, int wake_fd) {
  check_driver(write_value_(stream, device_address(word), value, CU_STREAM_WRITE_VALUE_DEFAULT),
               "cuStreamWriteValue64");
  DC_CUDA_CHECK(cudaLaunchHostFunc(stream, write_wake_fd, reinterpret_cast<void*>(intptr_t{wake_fd})));
}

void CudaStreams::enqueue_gate(cudaStream_t stream, const uint64_t* word, uint64_t value) {
  check_driver(wait_value_(stream, device_address(word), value, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue64");
}

void CudaStreams::enqueue_gate_reset(cudaStream_t stream, uint64_t* word, uint64_t value, uint64_t reset) {
  const CUdeviceptr address = device_address(word);
  check_driver(wait_value_(stream, address, value, CU_STREAM_WAIT_VALUE_EQ), "cuStreamWaitValue64");
  check_driver(write_value_(stream, address, reset, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue64");
}

void CudaStreams::retain_until_graph_destroyed(cudaStream_t stream, void (*release)(void*), void* arg) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  DC_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph));
  if (status != cudaStreamCaptureStatusActive || graph == nullptr)
    fail(dcInvalidUsage, "DeepComm CUDA plugin: the stream is not capturing a graph");
  cudaUserObject_t object = nullptr;
  DC_CUDA_CHECK(cudaUserObjectCreate(&object, arg, release, 1, cudaUserObjectNoDestructorSync));
  DC_CUDA_CHECK(cudaGraphRetainUserObject(graph, object, 1, cudaGraphUserObjectMove));
}

void CudaStreams::open_gate(uint64_t* word, uint64_t value) {
  std::atomic_ref<uint64_t>(*word).store(value, std::memory_order_release);
}

bool CudaStreams::capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  DC_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

CUdeviceptr CudaStreams::device_address(const void* pinned) {
  void* device = nullptr;
  DC_CUDA_CHECK(cudaHostGetDevicePointer(&device, const_cast<void*>(pinned), 0));
  return reinterpret_cast<CUdeviceptr>(device);
}

}  // namespace dc::cuda
