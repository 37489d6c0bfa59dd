#include "transports/shm/shm_segment.h"

#include <sys/mman.h>

#include <cstdio>
#include <random>

#include "src/base/error.h"
#include "src/base/named_shm.h"

namespace dc {

std::unique_ptr<ShmSegment> ShmSegment::create(uint64_t session) {
  std::random_device random;
  char name[64];
  std::snprintf(name, sizeof name, "/dc-%016llx-%08x%08x", static_cast<unsigned long long>(session),
                random(), random());
  auto* base = static_cast<char*>(create_named_shm(name, kBytes, "shm segment"));
  return std::unique_ptr<ShmSegment>(new ShmSegment(name, base));
}

std::unique_ptr<ShmSegment> ShmSegment::open(const std::string& name) {
  if (name.rfind("/dc-", 0) != 0 || name.find('/', 1) != std::string::npos) {
    fail(dcInvalidArgument, "shm segment: unexpected name '" + name + "'");
  }
  char* base = nullptr;
  try {
    base = static_cast<char*>(open_named_shm(name, kBytes, "shm segment"));
  } catch (const Error&) {
    shm_unlink(name.c_str());  // a segment this rank cannot use must not outlive the attempt
    throw;
  }
  auto segment = std::unique_ptr<ShmSegment>(new ShmSegment(name, base));
  segment->unlink();
  return segment;
}

ShmSegment::~ShmSegment() {
  unlink();
  munmap(base_, kBytes);
}

void ShmSegment::unlink() {
  if (!linked_) return;
  linked_ = false;
  shm_unlink(name_.c_str());  // ENOENT when the other side already did it
}

}  // namespace dc
