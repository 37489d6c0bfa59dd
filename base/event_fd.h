// An eventfd owned by one object (nonblocking, close-on-exec): a counter that some threads ring
// and one waits on, in poll or epoll or here, and drains. Doorbells written by a device stream
// name its fd().
#pragma once

namespace dc {

class EventFd {
 public:
  // Throws dc::Error (dcSystemError) naming `owner` when the kernel gives no eventfd.
  explicit EventFd(const char* owner);
  ~EventFd();
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;

  int fd() const { return fd_; }
  // Adds one. Never blocks: where the counter is full the fd is readable anyway.
  void ring() const;
  // Takes the count back to 0 (does nothing when it is 0).
  void drain() const;
  // Waits at most timeout_ms for a ring, then drains.
  void wait_and_drain(int timeout_ms) const;

 private:
  const int fd_;
};

}  // namespace dc
