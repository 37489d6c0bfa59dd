#include "transports/ucx/ucx_staging.h"

#include <malloc.h>

#include <bit>
#include <utility>

namespace dc {

namespace {

constexpr size_t kSmallestClass = 12;  // 4 KiB: smaller payloads share it

size_t size_class(size_t bytes) {
  const size_t log2 = bytes <= 1 ? 0 : std::bit_width(bytes - 1);
  return log2 < kSmallestClass ? kSmallestClass : log2;
}

}  // namespace

UcxStagingPool::Buffer::~Buffer() {
  if (pool_) pool_->give_back(std::move(data_), capacity_);
}

UcxStagingPool::Buffer& UcxStagingPool::Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (pool_) pool_->give_back(std::move(data_), capacity_);
    data_ = std::move(other.data_);
    capacity_ = other.capacity_;
    pool_ = std::move(other.pool_);
  }
  return *this;
}

UcxStagingPool::Buffer UcxStagingPool::take(size_t bytes) {
  const size_t cls = size_class(bytes);
  Buffer buffer;
  buffer.capacity_ = size_t{1} << cls;
  buffer.pool_ = shared_from_this();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cls < free_.size() && !free_[cls].empty()) {
      buffer.data_ = std::move(free_[cls].back());
      free_[cls].pop_back();
      retained_ -= buffer.capacity_;
      return buffer;
    }
  }
  buffer.data_.reset(new unsigned char[buffer.capacity_]);  // not zeroed: a payload overwrites it
  return buffer;
}

size_t UcxStagingPool::retained_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return retained_;
}

size_t UcxStagingPool::release_retained() {
  std::vector<std::vector<std::unique_ptr<unsigned char[]>>> freed;
  size_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    freed.swap(free_);
    bytes = std::exchange(retained_, 0);
  }
  freed.clear();
  // Buffers below glibc's (rising) mmap threshold come from the heap, which keeps freed pages
  // unless trimmed. Suspend asks once per UCX connection: only the first call has anything to trim.
  if (bytes > 0) malloc_trim(0);
  return bytes;
}

void UcxStagingPool::give_back(std::unique_ptr<unsigned char[]> data, size_t capacity) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (retained_ + capacity > kRetainBytes) return;  // data is freed
  const size_t cls = size_class(capacity);
  if (free_.size() <= cls) free_.resize(cls + 1);
  free_[cls].push_back(std::move(data));
  retained_ += capacity;
}

}  // namespace dc
