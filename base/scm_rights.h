// A descriptor sent with a message on a Unix socket (SCM_RIGHTS): one place for the control
// message's layout, used by the shm transport's stream and by the tests that forge its frames.
#pragma once

#include <sys/socket.h>

#include <cstring>

namespace dc {

// Room for one descriptor's control message; a buffer of this size must be aligned for cmsghdr.
constexpr size_t kOneFdControlBytes = CMSG_SPACE(sizeof(int));

// Makes msg carry fd with its first byte, its control message written into control.
inline void attach_fd(msghdr& msg, char* control, int fd) {
  std::memset(control, 0, kOneFdControlBytes);
  msg.msg_control = control;
  msg.msg_controllen = kOneFdControlBytes;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
}

}  // namespace dc
