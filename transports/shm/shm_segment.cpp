#include "transports/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "src/core/error.h"

namespace dc {

namespace {

[[noreturn]] void fail_errno(const std::string& what, const std::string& name) {
  fail(dcSystemError, "shm segment " + name + ": " + what + ": " + std::strerror(errno));
}

char* map_fd(int fd, const std::string& name) {
  void* p = mmap(nullptr, ShmSegment::kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int saved = errno;
    close(fd);
    errno = saved;
    fail_errno("mmap", name);
  }
  close(fd);
  return static_cast<char*>(p);
}

}  // namespace

std::unique_ptr<ShmSegment> ShmSegment::create(uint64_t session) {
  std::random_device random;
  char name[64];
  std::snprintf(name, sizeof name, "/dc-%016llx-%08x%08x", static_cast<unsigned long long>(session),
                random(), random());
  const int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) fail_errno("shm_open", name);
  if (ftruncate(fd, static_cast<off_t>(kBytes)) != 0) {
    const int saved = errno;
    close(fd);
    shm_unlink(name);
    errno = saved;
    fail_errno("ftruncate", name);
  }
  char* base = nullptr;
  try {
    base = map_fd(fd, name);
  } catch (...) {
    shm_unlink(name);
    throw;
  }
  return std::unique_ptr<ShmSegment>(new ShmSegment(name, base));
}

std::unique_ptr<ShmSegment> ShmSegment::open(const std::string& name) {
  if (name.rfind("/dc-", 0) != 0 || name.find('/', 1) != std::string::npos) {
    fail(dcInvalidArgument, "shm segment: unexpected name '" + name + "'");
  }
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) fail_errno("shm_open", name);
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < kBytes) {
    close(fd);
    shm_unlink(name.c_str());
    fail(dcSystemError, "shm segment " + name + ": smaller than expected");
  }
  auto segment = std::unique_ptr<ShmSegment>(new ShmSegment(name, map_fd(fd, name)));
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
