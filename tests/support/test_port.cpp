#include "tests/support/test_port.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

namespace dc::test {
namespace {

constexpr int kLowestPort = 10000;
constexpr const char* kLockDir = "/tmp/deepcomm-test-ports";

bool bindable(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return ok;
}

// The port's lock file, locked, or -1 when another process holds it. Kept open for the rest of the
// process: the lock lives as long as an open description of it, so forked ranks keep it too, and
// the kernel drops it when all of them exit.
int claim(int port) {
  const std::string path = std::string(kLockDir) + "/" + std::to_string(port);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return -1;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int ephemeral_range_start() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int first = 0;
  if (!(range >> first) || first <= kLowestPort) return 32768;  // Linux's default
  return first;
}

int reserved_port() {
  mkdir(kLockDir, 01777);
  const int end = ephemeral_range_start();
  std::minstd_rand pick(static_cast<unsigned>(getpid()) * 2654435761u);
  std::uniform_int_distribution<int> port_in(kLowestPort, end - 1);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const int port = port_in(pick);
    const int lock = claim(port);
    if (lock < 0) continue;
    if (bindable(port)) return port;
    close(lock);  // taken by something outside the tests
  }
  throw std::runtime_error("no free test port below the ephemeral range");
}

}  // namespace dc::test
