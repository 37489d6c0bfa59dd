// A receive cancelled while its payload is landing writes nothing into the caller's buffer after the
// call returned. Rank 0 receives 256 MiB from rank 1; once bytes flow, rank 0 stops rank 1
// (SIGSTOP), so the transport's read stalls mid-piece, and rank 2 dies, which fails rank 0's
// receive. Rank 0 fills its buffer with a sentinel as soon as the call returns, lets rank 1 go on
// (SIGCONT) and checks that the sentinel survives while the rest of rank 1's message arrives.
// Rank 0 watches its buffer fill through a second mapping of the same memory: the watcher's reads
// then do not race with the transport's writes (ThreadSanitizer tells accesses apart by address).
// TCP only: shm reads the stopped sender's memory (the receive completes), and UCX 1.13 keeps
// writing a matched rendezvous payload after a forced endpoint close (docs/architecture.md).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "tests/faults/fault_support.h"
#include "tests/support/collective_check.h"

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

// Two mappings of one memfd: the receive buffer and a window the watcher reads it through.
struct TwoViews {
  unsigned char* buffer = nullptr;
  const volatile unsigned char* window = nullptr;
  explicit TwoViews(size_t bytes) {
    const int fd = memfd_create("late-payload", 0);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) return;
    void* a = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    void* b = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (a != MAP_FAILED && b != MAP_FAILED) {
      buffer = static_cast<unsigned char*>(a);
      window = static_cast<const volatile unsigned char*>(b);
    }
    bytes_ = bytes;
  }
  ~TwoViews() {
    if (buffer) munmap(buffer, bytes_);
    if (window) munmap(const_cast<unsigned char*>(window), bytes_);
  }
  TwoViews(const TwoViews&) = delete;
  TwoViews& operator=(const TwoViews&) = delete;

 private:
  size_t bytes_ = 0;
};

TEST(LatePayload, NothingLandsAfterAFailedReceiveReturnedOverTcp) {
  void* shared = mmap(nullptr, sizeof(Rendezvous), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* meeting = new (shared) Rendezvous;
  const std::string errors = dctest::run_as_processes(
      3, {{"DEEPCOMM_TRANSPORT", "tcp"}},
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
          dcCommAbort(comm);
          return 0;
        }
        TwoViews views(kBytes);  // zero-filled
        if (!views.buffer) return 6;
        unsigned char* buffer = views.buffer;
        // Rank 0: stop the sender once its bytes are arriving (the receive is mid-payload).
        bool stopped = false;
        std::thread stopper([&] {
          stopped = wait_for([&] { return meeting->sender.load() != 0 && views.window[kBytes / 64] == kPayload; }, 60) &&
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
          fprintf(stderr, "rank 0: %zu bytes written into the buffer after the failed receive returned\n",
                  overwritten);
          return 5;
        }
        return 0;
      },
      120, {2});
  munmap(shared, sizeof(Rendezvous));
  EXPECT_EQ(errors, "");
}

}  // namespace
