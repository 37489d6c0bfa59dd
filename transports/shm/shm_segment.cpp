#include "transports/shm/shm_segment.h"

#include <sys/mman.h>

namespace dc {

std::unique_ptr<ShmSegment> ShmSegment::create(UniqueFd* to_pass) {
  UniqueFd fd = create_sealed_memfd("deepcomm-segment", kBytes, "shm segment");
  auto* base = static_cast<char*>(map_memfd(fd.get(), kBytes, true, "shm segment"));
  *to_pass = std::move(fd);
  return std::unique_ptr<ShmSegment>(new ShmSegment(base));
}

std::unique_ptr<ShmSegment> ShmSegment::adopt(int fd) {
  return std::unique_ptr<ShmSegment>(new ShmSegment(static_cast<char*>(map_memfd(fd, kBytes, false, "shm segment"))));
}

ShmSegment::~ShmSegment() { munmap(base_, kBytes); }

}  // namespace dc
