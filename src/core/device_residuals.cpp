#include "src/core/device_residuals.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/log.h"

namespace dc {

namespace {

constexpr size_t kZeroBytes = size_t{1} << 20;  // the pinned block zeroing copies read from

}  // namespace

float* DeviceResidualStore::find_or_create(const void* buffer, size_t count, dcDataType_t type, device::Stream stream,
                                           uint64_t op, uint64_t retired_through, Status* status) {
  const Key key{reinterpret_cast<uintptr_t>(buffer), count, static_cast<int>(type)};
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);  // most recently used
    it->second->block.last_op = op;
    return it->second->block.values;
  }
  const uint64_t bytes = count * sizeof(float);
  const bool kept = bytes <= cap_;
  if (!kept) {
    if (!std::exchange(warned_, true)) warn_residual_exceeds_cap(count, cap_);
  } else {
    while (bytes_ + bytes > cap_) {
      if (!std::exchange(warned_, true)) warn_residuals_dropped(cap_);
      Entry& victim = lru_.back();
      bytes_ -= std::get<1>(victim.key) * sizeof(float);  // its count
      drop(victim.block);
      index_.erase(victim.key);
      lru_.pop_back();
    }
  }
  Block block = take_block(count, retired_through, status);
  if (!status->ok()) return nullptr;
  block.last_op = op;
  *status = zero(block.values, count, stream);
  if (!status->ok() || !kept) {
    drop(block);  // a copy into it may be on the stream; for one call only, it is dropped at once
    return status->ok() ? block.values : nullptr;
  }
  lru_.push_front(Entry{key, block});
  index_[key] = lru_.begin();
  bytes_ += bytes;
  return block.values;
}

void DeviceResidualStore::reset_on_change(const std::string& generation) {
  if (!generation_.changed(generation)) return;
  DC_INFO("compressed all-reduce on device buffers: DEEPCOMM_COMPRESS_RESET changed to '%s': error feedback reset",
          generation.c_str());
  for (const Entry& entry : lru_) drop(entry.block);
  lru_.clear();
  index_.clear();
  bytes_ = 0;
}

DeviceResidualStore::Block DeviceResidualStore::take_block(size_t count, uint64_t retired_through, Status* status) {
  // The smallest dropped block that fits and that no pending operation uses.
  auto best = dropped_.end();
  for (auto it = dropped_.begin(); it != dropped_.end(); ++it)
    if (it->capacity >= count && it->last_op <= retired_through &&
        (best == dropped_.end() || it->capacity < best->capacity))
      best = it;
  if (best != dropped_.end()) {
    const Block block = *best;
    dropped_.erase(best);
    return block;
  }
  auto* values = static_cast<float*>(streams_.alloc_device(std::max<size_t>(count, 1) * sizeof(float), status));
  return status->ok() ? Block{values, count, 0} : Block{};
}

Status DeviceResidualStore::zero(float* values, size_t count, device::Stream stream) {
  if (!zeros_) {
    zeros_ = streams_.alloc_pinned(kZeroBytes);
    if (!zeros_) return Status::failure(dcSystemError, "DeepComm: no pinned memory for a device residual's zeros");
    std::memset(zeros_, 0, kZeroBytes);
  }
  const size_t bytes = count * sizeof(float);
  Status status;
  for (size_t at = 0; at < bytes && status.ok(); at += kZeroBytes)
    status = streams_.enqueue_copy(stream, reinterpret_cast<uint8_t*>(values) + at, zeros_,
                                   std::min(kZeroBytes, bytes - at));
  return status;
}

void DeviceResidualStore::release() {
  for (const Entry& entry : lru_) streams_.free_device(entry.block.values);
  for (const Block& block : dropped_) streams_.free_device(block.values);
  lru_.clear();
  index_.clear();
  dropped_.clear();
  bytes_ = 0;
  if (zeros_) streams_.free_pinned(std::exchange(zeros_, nullptr));
}

}  // namespace dc
