// A communicator's scratch buffer, mapped straight from the kernel rather than taken from the heap:
// freeing it (suspend, destroy) gives its pages back at once. From the heap, a large block freed
// stays resident where the allocator keeps it (glibc raises its mmap threshold after such a free).
#pragma once

#include <cstddef>

namespace dc {

class ScratchMemory {
 public:
  ScratchMemory() = default;
  explicit ScratchMemory(size_t bytes);  // zero-filled; throws std::bad_alloc
  ~ScratchMemory();
  ScratchMemory(ScratchMemory&& other) noexcept;
  ScratchMemory& operator=(ScratchMemory&& other) noexcept;
  ScratchMemory(const ScratchMemory&) = delete;
  ScratchMemory& operator=(const ScratchMemory&) = delete;

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace dc
