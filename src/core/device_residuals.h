// The error feedback of DEEPCOMM_COMPRESS on device buffers (the stream bridge's compressed
// all-reduces): one residual of count floats in device memory per user buffer, under the host
// store's rules (src/exec/residual_store.h), so that device calls give the host calls' bits:
// DEEPCOMM_COMPRESS_EF_BYTES caps the residuals' memory, the least recently used are dropped when a
// new one does not fit (those buffers start again from zero), a buffer whose residual alone exceeds
// the cap gets one for the call only, and a change of DEEPCOMM_COMPRESS_RESET drops them all. A new
// residual is zeroed on the stream of the call that first uses it.
//
// Device memory is not freed while the bridge lives (cudaFree waits for every stream, and a stream
// may wait at a gate that only the bridge opens: see StreamWorkspace). A dropped residual's memory is
// kept and reused for a later residual that fits in it, once every operation that used it retired.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/error.h"
#include "deepcomm/deepcomm.h"
#include "device/stream_queue.h"
#include "src/exec/residual_store.h"

namespace dc {

class DeviceResidualStore {
 public:
  DeviceResidualStore(device::StreamQueue& streams, uint64_t cap_bytes) : streams_(streams), cap_(cap_bytes) {}

  // The residual of the user's buffer (address, count, datatype, as the host store keys them) for
  // the operation numbered `op`: the one it had, else a zeroed one (enqueued on stream).
  // retired_through: every operation up to this number left its streams, so memory dropped before
  // them may be reused.
  float* find_or_create(const void* buffer, size_t count, dcDataType_t type, device::Stream stream, uint64_t op,
                        uint64_t retired_through, Status* status);
  // Drops every residual when `generation` (DEEPCOMM_COMPRESS_RESET's value) changed.
  void reset_on_change(const std::string& generation);
  uint64_t bytes() const { return bytes_; }  // of the residuals kept
  size_t entries() const { return lru_.size(); }
  // Frees all device and pinned memory (no stream may use it any more).
  void release();

 private:
  struct Block {
    float* values = nullptr;
    size_t capacity = 0;  // floats
    uint64_t last_op = 0;
  };
  using Key = std::tuple<uintptr_t, size_t, int>;
  struct Entry {
    Key key;
    Block block;
  };

  // A block of at least count floats: a dropped one whose operations retired, else a new one.
  Block take_block(size_t count, uint64_t retired_through, Status* status);
  void drop(Block block) { dropped_.push_back(block); }
  Status zero(float* values, size_t count, device::Stream stream);

  device::StreamQueue& streams_;
  uint64_t cap_;
  uint64_t bytes_ = 0;
  std::list<Entry> lru_;  // most recently used first
  std::map<Key, std::list<Entry>::iterator> index_;
  std::vector<Block> dropped_;
  ResetGeneration generation_;
  bool warned_ = false;
  void* zeros_ = nullptr;  // pinned: the source of zeroing copies
};

}  // namespace dc
