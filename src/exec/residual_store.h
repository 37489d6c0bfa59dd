// The error-feedback state of a communicator's compressed all-reduces on the NCCL path (where no
// handle can be passed): one residual per (buffer address, count, datatype), zero on first use
// and kept across calls. Its memory is capped (DEEPCOMM_COMPRESS_EF_BYTES): when a new residual
// does not fit, the least recently used ones are dropped (their buffers start again from zero,
// with a warning); a buffer whose residual alone exceeds the cap gets one for the call only.
// reset() empties it (dcCommResetCompression, or DEEPCOMM_COMPRESS_RESET changing); it is freed
// with the communicator. A residual in use by a pending operation stays alive with it.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "src/exec/compressed_call.h"

namespace dc {

// DEEPCOMM_COMPRESS_RESET's value as a store last saw it: changed() is true when a value differs
// from the one before (the first value only records it).
class ResetGeneration {
 public:
  bool changed(const std::string& value) {
    const bool differs = seen_ && value != value_;
    seen_ = true;
    value_ = value;
    return differs;
  }

 private:
  bool seen_ = false;
  std::string value_;
};

// The stores' two warnings (each store logs the first of them once).
void warn_residual_exceeds_cap(uint64_t count, uint64_t cap_bytes);
void warn_residuals_dropped(uint64_t cap_bytes);

class ResidualStore {
 public:
  explicit ResidualStore(uint64_t cap_bytes) : cap_(cap_bytes) {}

  std::shared_ptr<ResidualState> find_or_create(const void* address, uint64_t count, dcDataType_t type);
  void reset();
  // Empties the store when `generation` (the value of DEEPCOMM_COMPRESS_RESET) differs from the
  // last one seen; the first value seen only records it.
  void reset_on_change(const std::string& generation);
  uint64_t bytes() const;
  size_t entries() const;

 private:
  using Key = std::tuple<uintptr_t, uint64_t, int>;
  struct Entry {
    Key key;
    std::shared_ptr<ResidualState> state;
  };

  mutable std::mutex mutex_;
  uint64_t cap_;
  uint64_t bytes_ = 0;
  std::list<Entry> lru_;  // most recently used first
  std::map<Key, std::list<Entry>::iterator> index_;
  ResetGeneration generation_;
  bool warned_ = false;
};

}  // namespace dc
