// Registrations of ordinary memory for UCX's in-place transfers (zero-copy sends, rendezvous
// payloads received straight into the caller's buffer). The user never registers this memory and
// frees or reuses it as they like, so every registration must die with its pages: the cache learns
// of unmapped ranges from UCX's memory events (UCM_EVENT_VM_UNMAPPED, raised before munmap,
// mremap, brk shrinking and madvise take pages away) and drops what overlaps them before its next
// lookup. Ranges are recorded in a fixed ring; touching ones are merged, and when the ring is full
// a new range widens the recorded one that grows least (dropping, at worst, entries in between,
// which are registered again when next used). A range freed and mapped again at the same address is
// therefore registered afresh, never served from the stale entry. Memory freed to the heap but
// still mapped keeps its pages, and its registration stays valid.
//
// A registration covers whole pages; one that overlaps or touches a cached one is registered as
// their union, so a collective's pieces of one buffer end up sharing one entry. Entries are bounded
// (count and bytes, least recently used out first). A transfer holds a Lease for as long as UCX may
// use the handle: a dropped entry is unmapped only when its last lease goes.
//
// Threads: lookups from the engine thread (one at a time); unmapped() from any thread, inside the
// unmapping call (it records the range in a fixed ring, allocating nothing and calling nothing).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace dc {

class UcxRegistrationCache {
 public:
  // Registers [base, base + size) and returns an opaque handle (throws dc::Error on failure).
  using Register = std::function<void*(void* base, size_t size)>;
  using Unregister = std::function<void(void* handle)>;

  struct Registration {
    const char* begin = nullptr;
    size_t size = 0;
    void* handle = nullptr;
    Unregister unregister;
    ~Registration() {
      if (unregister) unregister(handle);
    }
  };
  using Lease = std::shared_ptr<const Registration>;

  struct Stats {
    uint64_t registrations = 0;  // handles made
    uint64_t hits = 0;           // lookups served by a cached entry
    uint64_t invalidated = 0;    // entries dropped because their pages were unmapped
    uint64_t evicted = 0;        // entries dropped to stay within the bounds
  };

  static constexpr size_t kMaxEntries = 256;
  static constexpr size_t kMaxBytes = size_t{16} << 30;

  UcxRegistrationCache(Register reg, Unregister unreg, size_t max_entries = kMaxEntries, size_t max_bytes = kMaxBytes);
  ~UcxRegistrationCache();
  UcxRegistrationCache(const UcxRegistrationCache&) = delete;
  UcxRegistrationCache& operator=(const UcxRegistrationCache&) = delete;

  // A registration covering [buf, buf + len); nullptr when registering fails (the caller stages).
  Lease acquire(const void* buf, size_t len);
  // The pages of [addr, addr + len) are about to go. Any thread; records only.
  void unmapped(const void* addr, size_t len);
  Stats stats() const { return stats_; }
  size_t entries() const { return entries_.size(); }

 private:
  struct Entry {
    Lease registration;
    uint64_t last_use = 0;
  };
  struct Range {
    uintptr_t begin = 0, end = 0;
  };
  static constexpr size_t kPendingRanges = 64;

  // Applies the ranges unmapped since the last lookup.
  void drop_unmapped();
  void drop_overlapping(uintptr_t begin, uintptr_t end);
  void keep_within_bounds();
  size_t cached_bytes() const;

  Register register_;
  Unregister unregister_;
  size_t max_entries_;
  size_t max_bytes_;
  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
  Stats stats_;

  std::mutex pending_mutex_;  // held only to copy ranges: nothing inside it allocates or unmaps
  std::array<Range, kPendingRanges> pending_{};
  size_t pending_count_ = 0;
  std::atomic<bool> has_pending_{false};
};

}  // namespace dc
