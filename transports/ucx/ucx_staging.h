// Staging memory for payloads in ordinary (unregistered) memory, which UCX sends from a copy and
// receives into one (ucx_channel.cpp, ucx_rendezvous.cpp). Buffers are kept for reuse: allocated
// afresh per message, a megabyte comes from mmap or from a heap the allocator trims again, so every
// message page-faults its staging in anew (measured: 1 MiB sendrecv over UCX sm 2.7x slower when
// the copies ran on the main thread's arena). A buffer may outlive the connection that took it (UCX
// can hold it past a close): it keeps the pool alive. Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace dc {

class UcxStagingPool : public std::enable_shared_from_this<UcxStagingPool> {
 public:
  // What the pool keeps for reuse at most; a buffer returned past it is freed.
  static constexpr size_t kRetainBytes = 64 * 1024 * 1024;

  // At least `bytes` of writable memory until destroyed (then back to the pool).
  class Buffer {
   public:
    Buffer() = default;
    Buffer(Buffer&&) = default;
    Buffer& operator=(Buffer&& other) noexcept;  // the buffer held before goes back to its pool
    ~Buffer();
    unsigned char* data() const { return data_.get(); }
    explicit operator bool() const { return data_ != nullptr; }

   private:
    friend class UcxStagingPool;
    std::unique_ptr<unsigned char[]> data_;
    size_t capacity_ = 0;
    std::shared_ptr<UcxStagingPool> pool_;
  };

  static std::shared_ptr<UcxStagingPool> make() { return std::shared_ptr<UcxStagingPool>(new UcxStagingPool()); }
  Buffer take(size_t bytes);
  // What it keeps for reuse now.
  size_t retained_bytes();
  // Frees what it keeps for reuse (buffers in use come back later as usual); returns the bytes.
  size_t release_retained();

 private:
  UcxStagingPool() = default;
  void give_back(std::unique_ptr<unsigned char[]> data, size_t capacity);

  std::mutex mutex_;
  std::vector<std::vector<std::unique_ptr<unsigned char[]>>> free_;  // by size class (log2)
  size_t retained_ = 0;
};

}  // namespace dc
