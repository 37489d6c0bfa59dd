#include "transports/shm/shm_regions.h"

#include <fcntl.h>
#include <unistd.h>

#include "base/shareable_memory.h"

namespace dc {

ShmRegions::~ShmRegions() {
  for (auto& [id, region] : exports_) ::close(region.fd);
}

uint64_t ShmRegions::export_region(const void* addr, size_t size) {
  ShareableRegion shareable;
  if (!find_shareable(addr, size, &shareable)) return 0;
  const int fd = fcntl(shareable.fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return 0;
  const uint64_t id = next_id_++;
  exports_[id] = ExportedRegion{id, static_cast<const char*>(shareable.base), shareable.size, fd};
  return id;
}

void ShmRegions::unexport_region(uint64_t id) {
  auto it = exports_.find(id);
  if (it == exports_.end()) return;
  ::close(it->second.fd);
  exports_.erase(it);
}

const ExportedRegion* ShmRegions::find_export(const void* buf, size_t len) const {
  const auto p = reinterpret_cast<uintptr_t>(buf);
  for (const auto& [id, region] : exports_) {
    const auto base = reinterpret_cast<uintptr_t>(region.base);
    if (p >= base && p - base <= region.size && len <= region.size - (p - base)) return &region;
  }
  return nullptr;
}

}  // namespace dc
