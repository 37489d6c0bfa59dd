#include "device/pinned_pool.h"

#include <bit>

namespace dc::device {

namespace {
constexpr size_t kSmallestClass = 4096;
}

PinnedPool::PinnedPool(StreamQueue& streams, size_t cached_bytes_bound)
    : streams_(streams), bound_(cached_bytes_bound) {}

PinnedPool::~PinnedPool() {
  for (auto& [size, blocks] : cached_)
    for (void* block : blocks) streams_.free_pinned(block);
}

size_t PinnedPool::size_class(size_t bytes) { return std::bit_ceil(bytes < kSmallestClass ? kSmallestClass : bytes); }

void* PinnedPool::take(size_t bytes) {
  const size_t size = size_class(bytes);
  std::vector<void*> surplus;
  void* block = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto cached = cached_.find(size);
    if (cached != cached_.end() && !cached->second.empty()) {
      block = cached->second.back();
      cached->second.pop_back();
      cached_bytes_ -= size;
    }
    // Over the bound: the largest cached blocks go, freed below without the lock.
    for (auto it = cached_.rbegin(); cached_bytes_ > bound_ && it != cached_.rend(); ++it)
      while (cached_bytes_ > bound_ && !it->second.empty()) {
        surplus.push_back(it->second.back());
        it->second.pop_back();
        cached_bytes_ -= it->first;
      }
  }
  for (void* spare : surplus) streams_.free_pinned(spare);
  if (block == nullptr) block = streams_.alloc_pinned(size);
  if (block == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  taken_[block] = size;
  return block;
}

void PinnedPool::give(void* block) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto taken = taken_.find(block);
  if (taken == taken_.end()) return;  // not from this pool
  cached_[taken->second].push_back(block);
  cached_bytes_ += taken->second;
  taken_.erase(taken);
}

void PinnedPool::release_cached() {
  std::map<size_t, std::vector<void*>> cached;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cached.swap(cached_);
    cached_bytes_ = 0;
  }
  for (const auto& [size, blocks] : cached)
    for (void* block : blocks) streams_.free_pinned(block);
}

size_t PinnedPool::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}

}  // namespace dc::device
