// A bounded cache of pinned host blocks over a stream queue (stream_queue.h), so that a device
// call does not allocate pinned memory (cudaHostAlloc costs far more than the call) and the thread
// that retires blocks makes no device call (cudaFreeHost may wait for the device). take() runs on
// the calling thread: a cached block of the same size class, or a new one; it also frees cached
// blocks beyond the bound. give() runs on any thread and only puts the block back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "device/stream_queue.h"

namespace dc::device {

class PinnedPool {
 public:
  PinnedPool(StreamQueue& streams, size_t cached_bytes_bound);
  ~PinnedPool();  // frees the cached blocks; blocks still taken are the caller's to give back first

  // A block of at least bytes, or nullptr when the queue cannot allocate one.
  void* take(size_t bytes);
  // Puts back a block from take(); no device call.
  void give(void* block);

  size_t cached_bytes() const;
  // Frees every cached block (suspending the communicator); blocks taken stay taken.
  void release_cached();

  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;

 private:
  static size_t size_class(size_t bytes);

  StreamQueue& streams_;
  const size_t bound_;
  mutable std::mutex mutex_;
  std::map<void*, size_t> taken_;                // block -> its class
  std::map<size_t, std::vector<void*>> cached_;  // class -> free blocks
  size_t cached_bytes_ = 0;
};

}  // namespace dc::device
