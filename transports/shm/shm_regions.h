// Registered shareable memory across processes, for single copy where cross-memory attach is
// forbidden. A rank registers memory that dcMemAlloc/ncclMemAlloc made (a sealed memfd); the first
// rendezvous send from it to a peer passes the memfd over their connection (a Memory frame, the
// descriptor by SCM_RIGHTS, shm_channel.h) and marks the RTS with the region's id; the receiver maps
// the region once and copies straight out of it. Plain malloc memory cannot be shared this way and
// keeps the other paths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace dc {

// A registered region this rank offers to its peers.
struct ExportedRegion {
  uint64_t id = 0;
  const char* base = nullptr;  // start of the memfd mapping (may precede the registered range)
  size_t size = 0;             // of the whole mapping
  int fd = -1;                 // our own duplicate, closed when the registration ends
};

// One per shm transport (all of its connections share it). Runs on the engine thread only.
class ShmRegions {
 public:
  ShmRegions() = default;
  ~ShmRegions();
  ShmRegions(const ShmRegions&) = delete;
  ShmRegions& operator=(const ShmRegions&) = delete;

  // Registers [addr, addr+size) if it lies inside shareable memory; returns its id, or 0.
  uint64_t export_region(const void* addr, size_t size);
  void unexport_region(uint64_t id);
  // The exported region holding [buf, buf+len), if any.
  const ExportedRegion* find_export(const void* buf, size_t len) const;

 private:
  uint64_t next_id_ = 1;
  std::map<uint64_t, ExportedRegion> exports_;
};

}  // namespace dc
