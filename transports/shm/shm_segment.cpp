#include "transports/shm/shm_segment.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/error.h"

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

void ShmSegment::release_pages() {
  // MADV_REMOVE punches a hole in the memfd itself, not just in this mapping: the peer's mapping
  // loses the pages too, so the memory really goes (a size seal does not forbid it).
  if (madvise(base_, kBytes, MADV_REMOVE) != 0)
    fail(dcSystemError, std::string("DeepComm: releasing a shm segment's pages: ") + std::strerror(errno));
}

ShmSegment::~ShmSegment() { munmap(base_, kBytes); }

}  // namespace dc
