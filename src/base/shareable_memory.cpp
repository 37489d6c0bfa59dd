#include "src/base/shareable_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "src/base/error.h"

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
  int fd = memfd_create("deepcomm-mem", MFD_CLOEXEC);
  if (fd < 0) fail(dcSystemError, std::string("DeepComm: memfd_create failed: ") + strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(rounded)) != 0) {
    int err = errno;
    close(fd);
    fail(dcSystemError, std::string("DeepComm: cannot size shareable memory: ") + strerror(err));
  }
  void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    close(fd);
    fail(dcSystemError, std::string("DeepComm: cannot map shareable memory: ") + strerror(err));
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  regions()[static_cast<const char*>(p)] = ShareableRegion{p, rounded, fd, g_next_serial++};
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
