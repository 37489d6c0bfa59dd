#include "base/memfd.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace dc {

namespace {

constexpr int kSizeSeals = F_SEAL_SHRINK | F_SEAL_GROW;

[[noreturn]] void fail_errno(const std::string& what, const char* step, int err) {
  fail(dcSystemError, what + ": " + step + ": " + std::strerror(err));
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

int UniqueFd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

UniqueFd create_sealed_memfd(const char* name, size_t bytes, const std::string& what) {
  UniqueFd fd(memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) fail_errno(what, "memfd_create", errno);
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) fail_errno(what, "ftruncate", errno);
  if (fcntl(fd.get(), F_ADD_SEALS, kSizeSeals | F_SEAL_SEAL) != 0) fail_errno(what, "sealing", errno);
  return fd;
}

std::string check_received_memfd(int fd, size_t bytes) {
  const int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0) return std::string("not a sealable memfd (") + std::strerror(errno) + ")";
  if ((seals & kSizeSeals) != kSizeSeals) return "its size is not sealed against shrinking and growing";
  struct stat st {};
  if (fstat(fd, &st) != 0) return std::string("fstat failed: ") + std::strerror(errno);
  if (st.st_size < 0 || static_cast<size_t>(st.st_size) != bytes)
    return "it holds " + std::to_string(st.st_size) + " bytes, the notice said " + std::to_string(bytes);
  return "";
}

void* map_memfd(int fd, size_t bytes, bool writable, const std::string& what) {
  void* base = mmap(nullptr, bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) fail_errno(what, "mmap", errno);
  return base;
}

UniqueFd duplicate_fd(int fd) { return UniqueFd(fcntl(fd, F_DUPFD_CLOEXEC, 0)); }

}  // namespace dc
