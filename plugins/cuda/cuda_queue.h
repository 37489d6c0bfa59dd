// A device queue on one CUDA device (device/plugin_abi.h, the element steps): element steps run on the
// caller's stream (a cudaStream_t carried as the 64-bit handle) or, for handle 0, on the queue's
// own non-blocking stream. Copies are cudaMemcpyAsync, the other steps kernels
// (element_launch.h). Every accepted step records an event after its work; poll() collects the
// completed ones in post order with cudaEventQuery, so the caller polls (no completion
// descriptor) and a step completes after every step posted before it.
//
// Threads: one thread posts at a time and one polls at a time, possibly two different ones (the
// ABI's contract); the list of pending steps is shared under a mutex. The device is the one current
// when the queue was made; post switches to it and back when the calling thread's differs.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "device/plugin_abi.h"

namespace dc::cuda {

class CudaQueue {
 public:
  // Checks for a driver and a device, makes the stream and loads the kernels. Throws dc::Error:
  // dcSystemError with "no CUDA driver" or "no CUDA device" where there is none, else
  // dcUnhandledCudaError with the failed call.
  CudaQueue();
  ~CudaQueue();  // after every accepted step completed (the ABI's contract)

  // Enqueues the step on stream (0: the queue's own) and records its completion event. Throws
  // dc::Error (nothing was accepted): dcInvalidArgument for a bad step, dcUnhandledCudaError.
  void post(const dcDeviceStep_t& step, uint64_t stream, uint64_t tag);
  // Writes up to max completions of steps that ended, in post order; never blocks. A failed step's
  // message stays valid until the next poll.
  int32_t poll(dcDeviceCompletion_t* out, int32_t max);
  // The most blocks a kernel's grid takes: enough to fill every SM.
  unsigned max_blocks() const { return max_blocks_; }

  CudaQueue(const CudaQueue&) = delete;
  CudaQueue& operator=(const CudaQueue&) = delete;

 private:
  struct Pending {
    uint64_t tag;
    cudaEvent_t done;
  };

  void copy(const dcDeviceStep_t& step, cudaStream_t stream);
  cudaEvent_t take_event();

  int device_ = 0;
  cudaStream_t own_stream_ = nullptr;
  unsigned max_blocks_ = 0;  // per kernel: enough to fill every SM
  std::mutex mutex_;         // pending_ and free_events_
  std::deque<Pending> pending_;
  std::vector<cudaEvent_t> free_events_;
  std::deque<std::string> messages_;  // the last poll's failures
};

}  // namespace dc::cuda
