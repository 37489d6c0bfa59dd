#include "base/event_fd.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/error.h"

namespace dc {

EventFd::EventFd(const char* owner) : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0) fail(dcSystemError, std::string("DeepComm: eventfd for ") + owner + ": " + std::strerror(errno));
}

EventFd::~EventFd() { close(fd_); }

void EventFd::ring() const {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(fd_, &one, sizeof one);  // only EAGAIN: a full counter
}

void EventFd::drain() const {
  uint64_t count = 0;
  [[maybe_unused]] ssize_t n = read(fd_, &count, sizeof count);  // EAGAIN: nothing rang
}

void EventFd::wait_and_drain(int timeout_ms) const {
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) > 0) drain();
}

}  // namespace dc
