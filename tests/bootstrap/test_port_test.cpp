// reserved_port(): the ports tests hand to code that binds them later. The old helper returned a
// port the kernel had just freed from its ephemeral range, so under `ctest -j2` another test's
// bind(0) or outgoing connection could take it before rank 0 bound it (bootstrap_test's
// TorchrunRanksMeet failed that way under load).
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <set>
#include <vector>

#include "tests/bootstrap/child_process.h"
#include "tests/support/test_port.h"

namespace dc::test {
namespace {

constexpr int kPortsPerProcess = 100;
constexpr int kTimeoutMs = 30000;

// A child that reserves ports, reports them through a pipe, and holds them until the release pipe
// closes. All children share one release pipe and drop their inherited write end of it at once, so
// closing the parent's end releases every one of them.
class Reserver {
 public:
  explicit Reserver(const int release[2]) {
    EXPECT_EQ(0, pipe(ports_));
    pid_ = fork_child([this, release] {
      close(release[1]);
      close(ports_[0]);
      for (int i = 0; i < kPortsPerProcess; ++i) {
        int port = reserved_port();
        if (write(ports_[1], &port, sizeof port) != sizeof port) return 1;
      }
      close(ports_[1]);
      pollfd released{release[0], POLLIN, 0};
      return poll(&released, 1, kTimeoutMs) == 1 ? 0 : 1;
    });
    close(ports_[1]);
  }
  ~Reserver() { close(ports_[0]); }

  std::vector<int> ports() {
    std::vector<int> ports;
    int port;
    while (read(ports_[0], &port, sizeof port) == sizeof port) ports.push_back(port);
    return ports;
  }

  int wait() { return wait_child(pid_, kTimeoutMs); }

 private:
  int ports_[2];
  pid_t pid_;
};

TEST(ReservedPort, LiesBelowTheEphemeralRange) {
  const int ephemeral = ephemeral_range_start();
  for (int i = 0; i < 20; ++i) {
    const int port = reserved_port();
    EXPECT_GE(port, 1024);
    EXPECT_LT(port, ephemeral) << "the kernel could hand this port to bind(0) or connect()";
  }
}

TEST(ReservedPort, NeverHandedToTwoLiveProcesses) {
  std::set<int> all;
  for (int i = 0; i < kPortsPerProcess; ++i) all.insert(reserved_port());
  EXPECT_EQ(all.size(), static_cast<size_t>(kPortsPerProcess)) << "this process got a port twice";
  int release[2];
  ASSERT_EQ(0, pipe(release));
  Reserver first(release), second(release);  // reserving at the same time, while this process holds its own
  for (Reserver* child : {&first, &second}) {
    std::vector<int> ports = child->ports();
    ASSERT_EQ(ports.size(), static_cast<size_t>(kPortsPerProcess));
    for (int port : ports) EXPECT_TRUE(all.insert(port).second) << "port " << port << " handed out twice";
  }
  close(release[1]);
  close(release[0]);
  EXPECT_EQ(0, first.wait());
  EXPECT_EQ(0, second.wait());
}

}  // namespace
}  // namespace dc::test
