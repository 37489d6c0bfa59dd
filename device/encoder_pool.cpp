#include "device/encoder_pool.h"

#include <malloc.h>

#include <mutex>
#include <utility>
#include <vector>

namespace dc::device {

namespace {

struct EncoderPool {
  std::mutex mutex;
  std::vector<std::unique_ptr<compression::Encoder>> idle;
};

EncoderPool& pool() {
  static EncoderPool* instance = new EncoderPool();  // never destroyed: codec workers may outlive statics
  return *instance;
}

}  // namespace

EncoderLease::EncoderLease() {
  {
    std::lock_guard<std::mutex> lock(pool().mutex);
    if (!pool().idle.empty()) {
      encoder_ = std::move(pool().idle.back());
      pool().idle.pop_back();
      return;
    }
  }
  encoder_ = std::make_unique<compression::Encoder>();
}

EncoderLease::~EncoderLease() {
  std::lock_guard<std::mutex> lock(pool().mutex);
  pool().idle.push_back(std::move(encoder_));
}

size_t release_idle_encoders() {
  std::vector<std::unique_ptr<compression::Encoder>> freed;
  {
    std::lock_guard<std::mutex> lock(pool().mutex);
    freed.swap(pool().idle);
  }
  const size_t count = freed.size();
  freed.clear();
  // Scratch below glibc's (rising) mmap threshold lives in the heap, which keeps freed pages unless
  // trimmed.
  if (count > 0) malloc_trim(0);
  return count;
}

}  // namespace dc::device
