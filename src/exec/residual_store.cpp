#include "src/exec/residual_store.h"

#include <utility>

#include "base/log.h"

namespace dc {

uint64_t spec_hash(const compression::Spec& spec) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : spec.to_string()) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

void warn_residual_exceeds_cap(uint64_t count, uint64_t cap_bytes) {
  DC_WARN(
      "compressed all-reduce: the error feedback of a buffer of %llu elements (%llu bytes) exceeds "
      "DEEPCOMM_COMPRESS_EF_BYTES=%llu: it is kept for single calls only",
      static_cast<unsigned long long>(count), static_cast<unsigned long long>(count * sizeof(float)),
      static_cast<unsigned long long>(cap_bytes));
}

void warn_residuals_dropped(uint64_t cap_bytes) {
  DC_WARN(
      "compressed all-reduce: error feedback over DEEPCOMM_COMPRESS_EF_BYTES=%llu; dropping the "
      "least recently used buffer's residual (it starts again from zero)",
      static_cast<unsigned long long>(cap_bytes));
}

std::shared_ptr<ResidualState> ResidualStore::find_or_create(const void* address, uint64_t count, dcDataType_t type) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Key key{reinterpret_cast<uintptr_t>(address), count, static_cast<int>(type)};
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);  // most recently used
    return it->second->state;
  }
  const uint64_t bytes = count * sizeof(float);
  auto state = std::make_shared<ResidualState>(count);
  if (bytes > cap_) {
    if (!std::exchange(warned_, true)) warn_residual_exceeds_cap(count, cap_);
    return state;
  }
  while (bytes_ + bytes > cap_) {
    const Entry& victim = lru_.back();
    if (!std::exchange(warned_, true)) warn_residuals_dropped(cap_);
    bytes_ -= victim.state->values.count() * sizeof(float);
    index_.erase(victim.key);
    lru_.pop_back();
  }
  lru_.push_front(Entry{key, state});
  index_[key] = lru_.begin();
  bytes_ += bytes;
  return state;
}

void ResidualStore::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  lru_.clear();
  index_.clear();
  bytes_ = 0;
}

void ResidualStore::reset_on_change(const std::string& generation) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!generation_.changed(generation)) return;
  }
  DC_INFO("compressed all-reduce: DEEPCOMM_COMPRESS_RESET changed to '%s': error feedback reset", generation.c_str());
  reset();
}

uint64_t ResidualStore::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

size_t ResidualStore::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lru_.size();
}

}  // namespace dc
