#include "src/exec/scratch_memory.h"

#include <sys/mman.h>

#include <new>
#include <utility>

namespace dc {

ScratchMemory::ScratchMemory(size_t bytes) {
  if (bytes == 0) return;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::byte*>(p);
  size_ = bytes;
}

ScratchMemory::~ScratchMemory() {
  if (data_) munmap(data_, size_);
}

ScratchMemory::ScratchMemory(ScratchMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

ScratchMemory& ScratchMemory::operator=(ScratchMemory&& other) noexcept {
  if (this != &other) {
    if (data_) munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace dc
