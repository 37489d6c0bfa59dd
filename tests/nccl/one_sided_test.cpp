// ncclPutSignal, ncclSignal and ncclWaitSignal between processes over shared memory, TCP and UCX:
// a ring of puts across datatypes, sizes (eager and rendezvous), offsets, signal indices and two
// contexts lands exactly the bytes sent; puts to one peer land in the order issued (the last of
// fifty writes to one place wins, and a signal sent after them is seen after them); waits inside
// a group run after the group's puts (no deadlock); windows of different sizes on different ranks
// refuse a put past the peer's end before anything is sent; a rank waiting for a peer that is
// killed gets an error within the fault deadline; a put to a peer that stopped (alive, not taking
// anything) fails at DEEPCOMM_TIMEOUT instead of waiting for ever; windows in ncclMemAlloc memory are
// mapped into the peers over shared memory (stores through ncclGetPeerDevicePointer, puts as stores).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "deepcomm/nccl.h"
#include "deepcomm/nccl_device_host.h"
#include "tests/support/nccl_ranks.h"

namespace {

using dctest::complain;
using Env = std::vector<std::pair<std::string, std::string>>;

constexpr int kRanks = 4;

size_t element_size(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclFloat32: return 4;
    default: return 8;
  }
}

std::vector<char> pattern(int rank, int round, size_t bytes) {
  std::vector<char> data(bytes);
  for (size_t k = 0; k < bytes; ++k) data[k] = static_cast<char>(rank * 131 + round * 17 + k * 7);
  return data;
}

bool barrier(ncclComm_t comm) {
  int one = 1, sum = 0;
  return ncclAllReduce(&one, &sum, 1, ncclInt32, ncclSum, comm, nullptr) == ncclSuccess;
}

struct PutCase {
  ncclDataType_t type;
  size_t count;
  size_t offset;
  int signal;
  int context;
};

constexpr size_t kWindowBytes = (1u << 20) + 8192;

// Every rank puts into the next one's window and checks what the previous one put into its own.
int ring_of_puts(int rank, int n, ncclComm_t world) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.numRmaCtx = 2;
  ncclComm_t comm = nullptr;
  if (ncclCommSplit(world, 0, rank, &comm, &config) != ncclSuccess) return complain(rank, ncclGetLastError(world));
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  std::vector<char> window(kWindowBytes, 0);
  ncclWindow_t win = nullptr;
  if (ncclCommWindowRegister(comm, window.data(), window.size(), &win, NCCL_WIN_DEFAULT) != ncclSuccess)
    return complain(rank, ncclGetLastError(comm));
  const PutCase cases[] = {{ncclInt8, 1, 0, 0, 0},
                           {ncclFloat32, 7, 3, 1, 1},
                           {ncclFloat64, 512, 4096, 15, 0},
                           {ncclBfloat16, 4099, 5, 2, 1},
                           {ncclInt32, 1u << 18, 8, 3, 0},
                           {ncclUint8, 0, 64, 4, 1},
                           {ncclFloat16, 33, kWindowBytes - 66, 5, 1}};
  int failures = 0;
  for (int round = 0; round < static_cast<int>(std::size(cases)); ++round) {
    const PutCase& c = cases[round];
    const size_t bytes = c.count * element_size(c.type);
    const std::vector<char> mine = pattern(rank, round, bytes);
    if (ncclPutSignal(mine.data(), c.count, c.type, next, win, c.offset, c.signal, c.context, 0, comm, nullptr) !=
        ncclSuccess)
      return complain(rank, std::string("put: ") + ncclGetLastError(comm));
    ncclWaitSignalDesc_t wait{1, prev, c.signal, c.context};
    if (ncclWaitSignal(1, &wait, comm, nullptr) != ncclSuccess)
      return complain(rank, std::string("wait: ") + ncclGetLastError(comm));
    if (std::memcmp(window.data() + c.offset, pattern(prev, round, bytes).data(), bytes) != 0)
      failures += complain(rank, "round " + std::to_string(round) + ": the window does not hold the put's bytes");
    // The window is zeroed between rounds: the bytes around the put are untouched.
    if ((c.offset > 0 && window[c.offset - 1] != 0) ||
        (c.offset + bytes < kWindowBytes && window[c.offset + bytes] != 0))
      failures += complain(rank, "round " + std::to_string(round) + ": a byte next to the put changed");
    if (!barrier(comm)) return complain(rank, ncclGetLastError(comm));
    std::memset(window.data() + c.offset, 0, bytes);
    if (!barrier(comm)) return complain(rank, ncclGetLastError(comm));
  }
  if (ncclCommWindowDeregister(comm, win) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
  ncclCommDestroy(comm);
  return failures;
}

// Fifty puts to one place, then a signal on another index: after waiting for all of them, the
// window holds the last put, whatever the transport did with the messages in between.
int puts_land_in_order(int rank, int n, ncclComm_t comm) {
  constexpr int kPuts = 50;
  constexpr size_t kInts = 4096;
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  std::vector<int32_t> window(kInts, -1);
  ncclWindow_t win = nullptr;
  if (ncclCommWindowRegister(comm, window.data(), window.size() * sizeof(int32_t), &win, NCCL_WIN_DEFAULT) !=
      ncclSuccess)
    return complain(rank, ncclGetLastError(comm));
  std::vector<int32_t> source(kInts);
  for (int k = 0; k < kPuts; ++k) {
    for (size_t i = 0; i < kInts; ++i) source[i] = rank * 1000 + k;
    if (ncclPutSignal(source.data(), kInts, ncclInt32, next, win, 0, 0, 0, 0, comm, nullptr) != ncclSuccess)
      return complain(rank, ncclGetLastError(comm));
  }
  if (ncclSignal(next, 1, 0, 0, comm, nullptr) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
  // The signal on index 1 comes after every put: once it is taken, all of them landed.
  ncclWaitSignalDesc_t after{1, prev, 1, 0};
  if (ncclWaitSignal(1, &after, comm, nullptr) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
  int failures = 0;
  for (size_t i = 0; i < kInts; ++i) {
    if (window[i] != prev * 1000 + kPuts - 1) {
      failures +=
          complain(rank, "int " + std::to_string(i) + " is " + std::to_string(window[i]) + ", not the last put");
      break;
    }
  }
  ncclWaitSignalDesc_t puts{kPuts, prev, 0, 0};
  if (ncclWaitSignal(1, &puts, comm, nullptr) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
  if (!barrier(comm)) return complain(rank, ncclGetLastError(comm));  // every rank checked its window
  // Inside a group the wait runs after the group's put, so every rank waiting first cannot deadlock.
  source.assign(kInts, rank + 7);
  ncclWaitSignalDesc_t grouped{1, prev, 2, 0};
  if (ncclGroupStart() != ncclSuccess || ncclWaitSignal(1, &grouped, comm, nullptr) != ncclSuccess ||
      ncclPutSignal(source.data(), kInts, ncclInt32, next, win, 0, 2, 0, 0, comm, nullptr) != ncclSuccess ||
      ncclGroupEnd() != ncclSuccess)
    return complain(rank, std::string("group: ") + ncclGetLastError(comm));
  if (window[0] != prev + 7 || window[kInts - 1] != prev + 7) failures += complain(rank, "the grouped put is missing");
  if (!barrier(comm)) return complain(rank, ncclGetLastError(comm));
  if (ncclCommWindowDeregister(comm, win) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
  return failures;
}

// Rank r's window is 100 * (r + 1) bytes: a 150-byte put fits every window but rank 0's, and the
// put to rank 0 is refused on the caller; rank 0's window stays as it was.
int sizes_differ(int rank, int n, ncclComm_t comm) {
  std::vector<char> window(100 * (rank + 1), 'w');
  ncclWindow_t win = nullptr;
  if (ncclCommWindowRegister(comm, window.data(), window.size(), &win, NCCL_WIN_DEFAULT) != ncclSuccess)
    return complain(rank, ncclGetLastError(comm));
  const std::vector<char> mine = pattern(rank, 0, 150);
  int failures = 0;
  for (int peer = 0; peer < n; ++peer) {
    if (peer == rank) continue;
    const ncclResult_t put = ncclPutSignal(mine.data(), 150, ncclUint8, peer, win, 0, rank, 0, 0, comm, nullptr);
    if (put != (peer == 0 ? ncclInvalidArgument : ncclSuccess))
      failures += complain(rank, "a put of 150 bytes to rank " + std::to_string(peer) + " returned " +
                                     std::to_string(put) + ": " + ncclGetLastError(comm));
  }
  if (rank != 0) {
    // Each other rank put into this window; take the signals in turn and check each put.
    for (int from = 0; from < n; ++from) {
      if (from == rank) continue;
      ncclWaitSignalDesc_t wait{1, from, from, 0};
      if (ncclWaitSignal(1, &wait, comm, nullptr) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
    }
  }
  if (!barrier(comm)) return complain(rank, ncclGetLastError(comm));
  if (rank == 0 && window != std::vector<char>(100, 'w')) failures += complain(rank, "a refused put wrote");
  if (rank != 0 &&
      std::memcmp(window.data() + 150, std::vector<char>(window.size() - 150, 'w').data(), window.size() - 150) != 0)
    failures += complain(rank, "bytes past the put changed");
  if (ncclCommWindowDeregister(comm, win) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
  return failures;
}

// Windows inside ncclMemAlloc memory: over shared memory each is mapped into the peers, so a rank
// stores into the next one's window through ncclGetPeerDevicePointer (the same address as through
// its LSA rank: the LSA team is the host's ranks) and then signals, and a put into it is a store by
// the origin. Elsewhere the pointers are refused, the LSA team is the rank alone and puts go as
// messages.
int windows_in_shareable_memory(int rank, int n, ncclComm_t comm, bool mapped) {
  constexpr size_t kBytes = 8192, kAt = 4096;  // the window starts inside the allocation
  const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
  void* memory = nullptr;
  if (ncclMemAlloc(&memory, 1 << 16) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
  char* window = static_cast<char*>(memory) + kAt;
  std::memset(window, 0, kBytes);
  ncclWindow_t win = nullptr;
  if (ncclCommWindowRegister(comm, window, kBytes, &win, NCCL_WIN_DEFAULT) != ncclSuccess)
    return complain(rank, ncclGetLastError(comm));
  int failures = 0;
  void* peer = nullptr;
  const ncclResult_t got = ncclGetPeerDevicePointer(win, 100, next, &peer);
  if (got != (mapped ? ncclSuccess : ncclInvalidUsage))
    return complain(rank, "the next rank's window pointer: " + std::to_string(got) + ": " + ncclGetLastError(comm));
  // The LSA team: over shared memory the host's ranks (here all of them), else the rank alone.
  const ncclTeam_t lsa = ncclTeamLsa(comm);
  const ncclTeam_t expected = mapped ? ncclTeam_t{n, rank, 1} : ncclTeam_t{1, 0, 1};
  if (lsa.nRanks != expected.nRanks || lsa.rank != expected.rank || lsa.stride != 1)
    failures += complain(rank, "LSA team {" + std::to_string(lsa.nRanks) + ", " + std::to_string(lsa.rank) + "}");
  if (ncclTeamRankToLsa(comm, ncclTeamWorld(comm), next) != (mapped ? next : -1))
    failures += complain(rank, "the next rank's LSA rank");
  void* through_lsa = nullptr;
  const ncclResult_t lsa_got = ncclGetLsaDevicePointer(win, 100, mapped ? next : 1, &through_lsa);
  if (lsa_got != (mapped ? ncclSuccess : ncclInvalidArgument) || through_lsa != peer)
    failures += complain(rank, "the next rank's window through its LSA rank: " + std::to_string(lsa_got));
  if (mapped) {
    std::memset(peer, 'a' + rank, 100);
    if (ncclSignal(next, 3, 0, 0, comm, nullptr) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
    ncclWaitSignalDesc_t stored{1, prev, 3, 0};
    if (ncclWaitSignal(1, &stored, comm, nullptr) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
    if (window[100] != 'a' + prev || window[199] != 'a' + prev || window[200] != 0)
      failures += complain(rank, "the previous rank's store through the mapped window is not there");
  }
  const std::vector<char> mine = pattern(rank, 9, 5000);
  if (ncclPutSignal(mine.data(), mine.size(), ncclInt8, next, win, 1000, 4, 0, 0, comm, nullptr) != ncclSuccess)
    return complain(rank, ncclGetLastError(comm));
  ncclWaitSignalDesc_t put{1, prev, 4, 0};
  if (ncclWaitSignal(1, &put, comm, nullptr) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
  if (std::memcmp(window + 1000, pattern(prev, 9, 5000).data(), 5000) != 0)
    failures += complain(rank, "the put into the window in ncclMemAlloc memory did not land");
  if (!barrier(comm)) return complain(rank, ncclGetLastError(comm));
  if (ncclCommWindowDeregister(comm, win) != ncclSuccess || ncclMemFree(memory) != ncclSuccess)
    return complain(rank, ncclGetLastError(comm));
  return failures;
}

class OneSided : public ::testing::TestWithParam<const char*> {
 protected:
  Env env() const { return {{"DEEPCOMM_TRANSPORT", GetParam()}, {"DEEPCOMM_TIMEOUT", "60"}}; }
};

TEST_P(OneSided, RingOfPutsAcrossTypesSizesOffsetsSignalsAndContexts) {
  EXPECT_EQ(dctest::run_nccl_ranks(kRanks, env(), ring_of_puts), "");
}

TEST_P(OneSided, PutsToOnePeerLandInOrderAndGroupsWaitLast) {
  EXPECT_EQ(dctest::run_nccl_ranks(kRanks, env(), puts_land_in_order), "");
}

TEST_P(OneSided, APutPastThePeersWindowIsRefusedAndWritesNothing) {
  EXPECT_EQ(dctest::run_nccl_ranks(kRanks, env(), sizes_differ), "");
}

TEST_P(OneSided, WindowsInNcclMemAllocMemoryAreMappedIntoPeersOverSharedMemory) {
  const bool mapped = std::string(GetParam()) == "shm";
  EXPECT_EQ(dctest::run_nccl_ranks(kRanks, env(),
                                   [mapped](int rank, int n, ncclComm_t comm) {
                                     return windows_in_shareable_memory(rank, n, comm, mapped);
                                   }),
            "");
}

// Rank 2 dies after the window exists; ranks 0 and 1 wait for its signal and get an error well
// within DEEPCOMM_TIMEOUT (60 s here): the death is what ends the wait.
TEST_P(OneSided, AWaitForAKilledPeerEndsWithAnError) {
  constexpr int kVictim = 2;
  const std::string errors = dctest::run_nccl_ranks(
      3, env(),
      [](int rank, int, ncclComm_t comm) {
        std::vector<char> window(4096);
        ncclWindow_t win = nullptr;
        if (ncclCommWindowRegister(comm, window.data(), window.size(), &win, NCCL_WIN_DEFAULT) != ncclSuccess)
          return complain(rank, ncclGetLastError(comm));
        if (rank == kVictim) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the others are waiting
          raise(SIGKILL);
        }
        const auto start = std::chrono::steady_clock::now();
        ncclWaitSignalDesc_t wait{1, kVictim, 0, 0};
        const ncclResult_t result = ncclWaitSignal(1, &wait, comm, nullptr);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (result == ncclSuccess) return complain(rank, "the wait for a dead peer succeeded");
        if (seconds > 5) return complain(rank, "the wait ended after " + std::to_string(seconds) + " s");
        ncclResult_t async = ncclSuccess;
        if (ncclCommGetAsyncError(comm, &async) != ncclSuccess || async == ncclSuccess)
          return complain(rank, "no asynchronous error after the peer died");
        std::printf("rank %d: the wait ended %.3f s after it began: %s\n", rank, seconds, ncclGetLastError(comm));
        return 0;
      },
      {kVictim});
  EXPECT_EQ(errors, "");
}

// Rank 1 stops (SIGSTOP) once its window exists: it is alive, so nothing reports a death, and it
// takes nothing in. Rank 0's 32 MiB put cannot complete, so it fails at DEEPCOMM_TIMEOUT (1 s
// here) and the communicator reports it; then rank 0 kills rank 1. Over TCP the failure cancels
// the send at once; over shm and UCX the stopped target reads the payload itself (cross-memory
// attach, rendezvous), so the send cannot be taken back and the call returns the error 5 s after
// the timeout, as every call whose operation does not end (the buffer is only ever read).
TEST_P(OneSided, APutToAStoppedPeerFailsAtTheTimeout) {
  constexpr int kStopped = 1;
  constexpr size_t kBytes = size_t{32} << 20;
  auto* stopped_pid =
      static_cast<pid_t*>(mmap(nullptr, sizeof(pid_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(stopped_pid, MAP_FAILED);
  *stopped_pid = 0;
  const std::string errors = dctest::run_nccl_ranks(
      2, {{"DEEPCOMM_TRANSPORT", GetParam()}, {"DEEPCOMM_TIMEOUT", "1"}},
      [stopped_pid](int rank, int, ncclComm_t comm) {
        std::vector<char> window(kBytes);
        ncclWindow_t win = nullptr;
        if (ncclCommWindowRegister(comm, window.data(), window.size(), &win, NCCL_WIN_DEFAULT) != ncclSuccess)
          return complain(rank, ncclGetLastError(comm));
        if (rank == kStopped) {
          __atomic_store_n(stopped_pid, getpid(), __ATOMIC_RELEASE);
          raise(SIGSTOP);
          return complain(rank, "continued");  // rank 0 kills it instead
        }
        while (__atomic_load_n(stopped_pid, __ATOMIC_ACQUIRE) == 0) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // it reached its SIGSTOP
        const std::vector<char> data(kBytes, 'p');
        const auto start = std::chrono::steady_clock::now();
        const ncclResult_t put =
            ncclPutSignal(data.data(), kBytes, ncclUint8, kStopped, win, 0, 0, 0, 0, comm, nullptr);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const std::string message = ncclGetLastError(comm);
        kill(__atomic_load_n(stopped_pid, __ATOMIC_ACQUIRE), SIGKILL);
        if (put == ncclSuccess) return complain(rank, "the put to a stopped peer succeeded");
        if (message.find("DEEPCOMM_TIMEOUT") == std::string::npos)
          return complain(rank, "not the timeout's error: " + message);
        if (seconds < 0.9 || seconds > 10)
          return complain(rank, "the put ended after " + std::to_string(seconds) + " s");
        ncclResult_t async = ncclSuccess;
        if (ncclCommGetAsyncError(comm, &async) != ncclSuccess || async == ncclSuccess)
          return complain(rank, "no asynchronous error after the put failed");
        std::printf("rank %d: the put to a stopped peer failed after %.2f s: %s\n", rank, seconds, message.c_str());
        return 0;
      },
      {kStopped});
  munmap(stopped_pid, sizeof(pid_t));
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(Transports, OneSided, ::testing::Values("shm", "tcp", "ucx-all"),
                         [](const auto& info) { return std::string(info.param) == "ucx-all" ? "ucx" : info.param; });

}  // namespace
