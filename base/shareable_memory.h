// Host memory from dcMemAlloc/ncclMemAlloc: a sealed memfd mapped shared, so a peer on the same
// host that is passed the descriptor can map the same pages instead of copying through a bounce
// buffer. The registry answers "is this address inside such memory, and where".
#pragma once

#include <cstddef>
#include <cstdint>

namespace dc {

struct ShareableRegion {
  void* base = nullptr;
  size_t size = 0;
  int fd = -1;
  uint64_t serial = 0;  // unique per allocation: tells a region from a later one at its address
};

void* shareable_alloc(size_t size);  // throws dc::Error
void shareable_free(void* ptr);      // throws dc::Error(dcInvalidArgument) for an unknown pointer
// Region containing [ptr, ptr + len), if any.
bool find_shareable(const void* ptr, size_t len, ShareableRegion* region);

}  // namespace dc
