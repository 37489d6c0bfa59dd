// One direction of the copy-through path: kSlots slots the sender fills and the receiver empties.
// The sender makes it (a sealed memfd) when it first needs it and passes it to the receiver with a
// Memory frame on their connection: it has no name, so a killed rank leaves nothing in /dev/shm.
#pragma once

#include <cstddef>
#include <memory>

#include "base/memfd.h"

namespace dc {

class ShmSegment {
 public:
  static constexpr size_t kSlots = 8;
  static constexpr size_t kSlotBytes = 512 * 1024;
  static constexpr size_t kBytes = kSlots * kSlotBytes;

  // A new segment; *to_pass receives a descriptor of it for the peer (throws dc::Error).
  static std::unique_ptr<ShmSegment> create(UniqueFd* to_pass);
  // Maps a segment the peer passed (checked: sealed, kBytes long). Throws dc::Error.
  static std::unique_ptr<ShmSegment> adopt(int fd);

  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  char* slot(size_t index) { return base_ + index * kSlotBytes; }
  // Gives the segment's pages back to the kernel (they read as zeros and are made again by the
  // next write, in every process mapping it). Only while no slot holds a chunk. Throws dc::Error.
  void release_pages();

 private:
  explicit ShmSegment(char* base) : base_(base) {}
  char* base_;
};

}  // namespace dc
