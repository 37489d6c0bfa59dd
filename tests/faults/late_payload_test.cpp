// A receive cancelled while its payload is landing writes nothing into the caller's buffer after the
// call returned, and the failed send on the other side reads nothing from its buffer after it
// returned. Rank 0 receives 256 MiB from rank 1; once bytes flow, rank 0 stops rank 1
// (SIGSTOP), so the transport's read stalls mid-piece, and rank 2 dies, which fails rank 0's
// receive. Rank 0 fills its buffer with a sentinel as soon as the call returns, lets rank 1 go on
// (SIGCONT) and checks that the sentinel survives while the rest of rank 1's message arrives.
// Rank 0 tells that the payload flows from its TCP sockets' received-byte counters (TCP_INFO), not
// from its buffer: UCX receives into staging, and reading the buffer would race with the transport.
// Over TCP and over UCX's tcp transport (UCX 1.13 keeps receiving a matched rendezvous payload
// after a forced endpoint close, so DeepComm lands such payloads in staging); not over shm, which
// reads the stopped sender's memory (the receive completes).
#include <gtest/gtest.h>

#include <dirent.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/faults/fault_support.h"
#include "tests/support/collective_check.h"
#include "tests/support/transport_probe.h"

namespace {

constexpr size_t kBytes = 256u << 20;
constexpr unsigned char kPayload = 0xAB, kSentinel = 0x11;

// Shared by the forked ranks (an anonymous shared mapping made before the fork).
struct Rendezvous {
  std::atomic<pid_t> sender{0};
  std::atomic<bool> sender_stopped{false};
};

bool wait_for(const std::function<bool()>& condition, double seconds) {
  const auto start = std::chrono::steady_clock::now();
  while (!condition()) {
    if (dctest::seconds_since(start) > seconds) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// Bytes this process's TCP sockets received so far (the transports' data connections among them).
uint64_t tcp_bytes_received() {
  uint64_t total = 0;
  DIR* fds = opendir("/proc/self/fd");
  if (!fds) return 0;
  while (const dirent* entry = readdir(fds)) {
    const int fd = atoi(entry->d_name);
    struct stat st;
    if (fd == dirfd(fds) || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    tcp_info info{};
    socklen_t len = sizeof info;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0) total += info.tcpi_bytes_received;
  }
  closedir(fds);
  return total;
}

void expect_nothing_lands_after_return(const std::vector<std::pair<std::string, std::string>>& env) {
  void* shared = mmap(nullptr, sizeof(Rendezvous), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* meeting = new (shared) Rendezvous;
  const std::string errors = dctest::run_as_processes(
      3, env,
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        if (rank == 2) {
          if (!wait_for([&] { return meeting->sender_stopped.load(); }, 60)) return 3;
          raise(SIGKILL);
        }
        if (rank == 1) {
          std::vector<unsigned char> payload(kBytes, kPayload);
          meeting->sender = getpid();
          dcSend(payload.data(), kBytes, dcUint8, 0, comm, nullptr);  // fails once rank 0 gave up
          // The caller owns its buffer again: free it, and give a transport that would still read
          // it time to do so (ASan reports that; reading unmapped memory faults).
          std::vector<unsigned char>().swap(payload);
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
          dcCommAbort(comm);
          return 0;
        }
        std::vector<unsigned char> received_into(kBytes);
        unsigned char* buffer = received_into.data();
        const uint64_t before = tcp_bytes_received();
        // Rank 0: stop the sender once its bytes are arriving (the receive is mid-payload).
        bool stopped = false;
        std::thread stopper([&] {
          stopped = wait_for([&] { return meeting->sender.load() != 0 && tcp_bytes_received() - before > kBytes / 64; },
                             60) &&
                    kill(meeting->sender.load(), SIGSTOP) == 0;
          std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the socket drains, the read stalls
          meeting->sender_stopped = true;
        });
        const dcResult_t received = dcRecv(buffer, kBytes, dcUint8, 1, comm, nullptr);
        std::memset(buffer, kSentinel, kBytes);  // the caller owns its buffer again
        stopper.join();
        if (!stopped) return 7;
        kill(meeting->sender.load(), SIGCONT);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));  // what rank 1 still had to send
        if (received == dcSuccess) {
          fprintf(stderr, "rank 0: the receive succeeded although rank 1 was stopped mid-message\n");
          return 4;
        }
        const size_t overwritten = kBytes - std::count(buffer, buffer + kBytes, kSentinel);
        dcCommAbort(comm);
        if (overwritten) {
          fprintf(stderr, "rank 0: %zu bytes written into the buffer after the failed receive returned\n", overwritten);
          return 5;
        }
        return 0;
      },
      120, {2});
  munmap(shared, sizeof(Rendezvous));
  EXPECT_EQ(errors, "");
}

TEST(LatePayload, NothingLandsAfterAFailedReceiveReturnedOverTcp) {
  expect_nothing_lands_after_return({{"DEEPCOMM_TRANSPORT", "tcp"}});
}

TEST(LatePayload, NothingLandsAfterAFailedReceiveReturnedOverUcxTcp) {
  if (const std::string why = dctest::transport_unavailable("ucx-all"); !why.empty()) GTEST_SKIP() << why;
  expect_nothing_lands_after_return({{"DEEPCOMM_TRANSPORT", "ucx-all"}, {"UCX_TLS", "tcp"}});
}

}  // namespace
