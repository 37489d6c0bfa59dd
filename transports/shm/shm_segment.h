// The per-connection shared-memory segment of the copy-through path: two halves (one per direction),
// each split into kSlots slots. The dialer creates it under a random name and the acceptor opens it;
// the name is unlinked as soon as both have it mapped, so a killed rank leaves nothing in /dev/shm.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace dc {

class ShmSegment {
 public:
  static constexpr size_t kSlots = 8;
  static constexpr size_t kSlotBytes = 512 * 1024;
  static constexpr size_t kBytes = 2 * kSlots * kSlotBytes;

  // Creates and maps a new segment named "/dc-<session>-<random>" (throws dc::Error).
  static std::unique_ptr<ShmSegment> create(uint64_t session);
  // Opens and maps an existing segment, then unlinks its name (throws dc::Error).
  static std::unique_ptr<ShmSegment> open(const std::string& name);

  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  const std::string& name() const { return name_; }
  // Removes the name (idempotent; the mapping stays).
  void unlink();
  // Slot `index` of half `half` (0: written by the dialer, 1: written by the acceptor).
  char* slot(int half, size_t index) { return base_ + (half * kSlots + index) * kSlotBytes; }

 private:
  ShmSegment(std::string name, char* base) : name_(std::move(name)), base_(base) {}

  std::string name_;
  char* base_;
  bool linked_ = true;
};

}  // namespace dc
