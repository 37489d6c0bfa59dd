// Unnamed shared memory (memfd) handed between the processes of one host over Unix sockets
// (SCM_RIGHTS): nothing has a name in /dev/shm, so a rank killed at any point leaves nothing behind.
// The sender seals the size (F_SEAL_SHRINK | F_SEAL_GROW), so a peer that mapped it can never take
// a SIGBUS from the file shrinking under it; the receiver checks the seals and the size before
// mapping.
#pragma once

#include <cstddef>
#include <string>

namespace dc {

// An owned file descriptor, closed when it goes.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  int release();
  void reset(int fd = -1);
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// A new memfd of `bytes` zeros, its size sealed; `name` shows in /proc/<pid>/maps of the processes
// that map it (nowhere else). Throws dc::Error(dcSystemError) naming `what`.
UniqueFd create_sealed_memfd(const char* name, size_t bytes, const std::string& what);
// "" when fd is a memfd sealed against shrinking and growing, exactly `bytes` long; else why not.
std::string check_received_memfd(int fd, size_t bytes);
// Maps the whole of fd shared (read-only unless writable). Throws dc::Error(dcSystemError).
void* map_memfd(int fd, size_t bytes, bool writable, const std::string& what);
// A duplicate of fd (close-on-exec), or an empty UniqueFd if it cannot be made.
UniqueFd duplicate_fd(int fd);

}  // namespace dc
