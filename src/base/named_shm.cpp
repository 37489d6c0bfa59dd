#include "src/base/named_shm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "src/base/error.h"

namespace dc {

namespace {

[[noreturn]] void fail_at(const std::string& what, const std::string& name, const char* step, int err) {
  fail(dcSystemError, what + " " + name + ": " + step + ": " + std::strerror(err));
}

// Maps `fd` and closes it either way.
void* map_and_close(int fd, size_t bytes) {
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  errno = err;
  return base;
}

}  // namespace

void* create_named_shm(const std::string& name, size_t bytes, const std::string& what) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) fail_at(what, name, "shm_open", errno);
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    close(fd);
    shm_unlink(name.c_str());
    fail_at(what, name, "ftruncate", err);
  }
  void* base = map_and_close(fd, bytes);
  if (base == MAP_FAILED) {
    const int err = errno;
    shm_unlink(name.c_str());
    fail_at(what, name, "mmap", err);
  }
  return base;
}

void* open_named_shm(const std::string& name, size_t bytes, const std::string& what) {
  const int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
  if (fd < 0) fail_at(what, name, "shm_open", errno);
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    close(fd);
    fail(dcSystemError, what + " " + name + ": not the expected size (" + std::to_string(bytes) + " bytes)");
  }
  void* base = map_and_close(fd, bytes);
  if (base == MAP_FAILED) fail_at(what, name, "mmap", errno);
  return base;
}

}  // namespace dc
