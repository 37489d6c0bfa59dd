#include "base/shareable_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "base/error.h"
#include "base/memfd.h"

namespace dc {

namespace {
std::mutex g_mutex;
uint64_t g_next_serial = 1;
std::map<const char*, ShareableRegion>& regions() {
  static auto* m = new std::map<const char*, ShareableRegion>();
  return *m;
}
}  // namespace

void* shareable_alloc(size_t size) {
  if (size == 0) fail(dcInvalidArgument, "DeepComm: memory allocation of 0 bytes");
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t rounded = (size + page - 1) / page * page;
  // Sealed: peers map it (shm_channel.cpp) and must never see it shrink under them.
  UniqueFd fd = create_sealed_memfd("deepcomm-mem", rounded, "DeepComm: shareable memory");
  void* p = map_memfd(fd.get(), rounded, true, "DeepComm: shareable memory");
  std::lock_guard<std::mutex> lock(g_mutex);
  regions()[static_cast<const char*>(p)] = ShareableRegion{p, rounded, fd.release(), g_next_serial++};
  return p;
}

void shareable_free(void* ptr) {
  ShareableRegion region;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = regions().find(static_cast<const char*>(ptr));
    if (it == regions().end())
      fail(dcInvalidArgument, "DeepComm: pointer was not allocated by dcMemAlloc/ncclMemAlloc");
    region = it->second;
    regions().erase(it);
  }
  munmap(region.base, region.size);
  close(region.fd);
}

bool find_shareable(const void* ptr, size_t len, ShareableRegion* region) {
  const char* p = static_cast<const char*>(ptr);
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = regions().upper_bound(p);
  if (it == regions().begin()) return false;
  --it;
  const char* base = it->first;
  if (p < base || p + len > base + it->second.size) return false;
  *region = it->second;
  return true;
}

}  // namespace dc
