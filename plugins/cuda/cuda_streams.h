// The stream bridge's functions on CUDA (device/plugin_abi.h version 3, device/stream_queue.h).
// Pinned memory is cudaHostAlloc'd (portable, mapped; in relaxed capture mode, so that a graph being
// captured in global mode on some stream is not invalidated by it), device memory cudaMalloc'd. A
// doorbell is a 64-bit memop write (cuStreamWriteValue64) followed by a host function that writes
// the bridge's eventfd (cudaLaunchHostFunc; it never blocks); a gate is a memop wait
// (cuStreamWaitValue64, GEQ) on the word's device-mapped address, a graph's gate a wait EQ and a
// write of the reset value. All of them are captured into graphs as nodes. What a captured
// operation needs is tied to its graph with a cudaUserObject, whose release runs on a CUDA thread
// that must make no CUDA call. The driver's memop entry points come from
// cudaGetDriverEntryPointByVersion, so the plugin never links libcuda. open_gate is a plain release
// store: the engine makes no CUDA call.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace dc::cuda {

class CudaStreams {
 public:
  // Checks the device and loads the memop entry points. Throws dc::Error(dcSystemError) where
  // 64-bit stream memory operations are unsupported (no gate-kernel fallback yet).
  CudaStreams();

  void* alloc_pinned(size_t bytes);
  void free_pinned(void* pointer);
  void* alloc_device(size_t bytes);
  void free_device(void* pointer);
  bool is_device_memory(const void* pointer) const;

  void enqueue_copy(cudaStream_t stream, void* dst, const void* src, size_t bytes);
  void enqueue_doorbell(cudaStream_t stream, uint64_t* word, uint64_t value, int wake_fd);
  void enqueue_gate(cudaStream_t stream, const uint64_t* word, uint64_t value);
  void enqueue_gate_reset(cudaStream_t stream, uint64_t* word, uint64_t value, uint64_t reset);
  static void open_gate(uint64_t* word, uint64_t value);
  static bool capturing(cudaStream_t stream);
  static void retain_until_graph_destroyed(cudaStream_t stream, void (*release)(void*), void* arg);

 private:
  using WriteValue64 = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);
  using WaitValue64 = CUresult (*)(CUstream, CUdeviceptr, cuuint64_t, unsigned int);

  static CUdeviceptr device_address(const void* pinned);

  WriteValue64 write_value_ = nullptr;
  WaitValue64 wait_value_ = nullptr;
};

}  // namespace dc::cuda
