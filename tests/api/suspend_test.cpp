// dcCommSuspend / dcCommResume / dcCommMemory with threads as ranks: the statistics count the
// scratch a large pre-multiplied all-reduce takes as releasable; suspending frees it and refuses
// operations, split and shrink with a message saying so, while queries and registration work;
// suspending is refused while the thread's open group holds operations of the communicator; after
// resuming, all-reduces give the same bits as before, also over UCX. Bad input gets clear errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "tests/support/collective_check.h"
#include "tests/support/transport_probe.h"

namespace {

constexpr int kRanks = 3;
constexpr size_t kCount = 1 << 20;  // 4 MiB of float32: on the engine, not the flat board

std::string describe(const dcCommMemory_t& m) {
  return "releasable " + std::to_string(m.releasableBytes) + " persistent " + std::to_string(m.persistentBytes) +
         " suspended " + std::to_string(m.suspended);
}

// "" when the last call failed with dcInvalidUsage and a message naming the suspension.
std::string refused(dcResult_t result, const char* call) {
  const std::string message = dcGetLastError();
  if (result == dcInvalidUsage && message.find("suspended") != std::string::npos) return "";
  return std::string(call) + " on a suspended communicator: " + dcGetErrorString(result) + " '" + message + "'; ";
}

TEST(Suspend, FreesScratchRefusesCallsAndResumesWithTheSameResults) {
  std::string errors = dctest::run_as_threads(kRanks, [](int rank, dcComm_t comm) -> std::string {
    dcRedOp_t half = dcSum;
    const float scalar = 0.5f;
    if (dcRedOpCreatePreMulSum(&half, &scalar, dcFloat32, comm) != dcSuccess) return dcGetLastError();
    std::vector<float> in(kCount), before(kCount), after(kCount);
    for (size_t i = 0; i < kCount; ++i) in[i] = 0.1f * (rank + 1) + 1e-3f * static_cast<float>(i % 977);
    dcCommMemory_t fresh{}, active{}, during{}, resumed{};
    if (dcCommMemory(comm, &fresh) != dcSuccess) return dcGetLastError();
    if (dcAllReduce(in.data(), before.data(), kCount, dcFloat32, half, comm, nullptr) != dcSuccess)
      return dcGetLastError();
    if (dcCommMemory(comm, &active) != dcSuccess) return dcGetLastError();
    std::string errors;
    // The scaled copy of the input is scratch: at least kCount floats of it.
    if (active.releasableBytes < kCount * sizeof(float) || active.suspended != 0)
      errors += "after the all-reduce: " + describe(active) + "; ";

    if (dcCommSuspend(comm) != dcSuccess) return std::string("suspend: ") + dcGetLastError();
    if (dcCommMemory(comm, &during) != dcSuccess) return dcGetLastError();
    if (during.releasableBytes != 0 || during.suspended != 1 || during.persistentBytes != active.persistentBytes)
      errors += "while suspended: " + describe(during) + " (before: " + describe(active) + "); ";
    errors += refused(dcAllReduce(in.data(), after.data(), kCount, dcFloat32, half, comm, nullptr), "dcAllReduce");
    int peer = (rank + 1) % kRanks;
    errors += refused(dcSend(in.data(), 1, dcFloat32, peer, comm, nullptr), "dcSend");
    dcComm_t child = nullptr;
    errors += refused(dcCommSplit(comm, 0, rank, &child, nullptr), "dcCommSplit");
    errors += refused(dcCommShrink(comm, &peer, 1, &child, nullptr, DC_SHRINK_DEFAULT), "dcCommShrink");
    if (child) errors += "a communicator came out of a refused call; ";
    if (dcCommSuspend(comm) != dcInvalidUsage) errors += "suspended twice; ";
    int count = 0;
    if (dcCommCount(comm, &count) != dcSuccess || count != kRanks) errors += "dcCommCount while suspended; ";
    void* handle = nullptr;
    if (dcCommRegister(comm, after.data(), after.size() * sizeof(float), &handle) != dcSuccess ||
        dcCommDeregister(comm, handle) != dcSuccess)
      errors += std::string("registration while suspended: ") + dcGetLastError() + "; ";

    if (dcCommResume(comm) != dcSuccess) return errors + "resume: " + dcGetLastError();
    if (dcCommResume(comm) != dcInvalidUsage) errors += "resumed a communicator not suspended; ";
    if (dcAllReduce(in.data(), after.data(), kCount, dcFloat32, half, comm, nullptr) != dcSuccess)
      return errors + "all-reduce after resume: " + dcGetLastError();
    if (std::memcmp(before.data(), after.data(), kCount * sizeof(float)) != 0)
      errors += "the all-reduce after resume differs from the one before; ";
    if (dcCommMemory(comm, &resumed) != dcSuccess || resumed.suspended != 0 ||
        resumed.releasableBytes != active.releasableBytes)
      errors += "after resume and an all-reduce: " + describe(resumed) + " (before: " + describe(active) + "); ";
    dcRedOpDestroy(half, comm);
    return errors;
  });
  EXPECT_EQ(errors, "");
}

TEST(Suspend, RefusedWhileTheThreadsGroupHoldsOperations) {
  std::string errors = dctest::run_as_threads(kRanks, [](int rank, dcComm_t comm) -> std::string {
    std::vector<float> in(kCount, 1.0f + rank), out(kCount, 0.0f);
    std::string errors;
    dcGroupStart();
    dcAllReduce(in.data(), out.data(), kCount, dcFloat32, dcSum, comm, nullptr);
    const dcResult_t queued = dcCommSuspend(comm);
    const std::string message = dcGetLastError();
    if (queued != dcInvalidUsage || message.find("group") == std::string::npos)
      errors += "suspend with an operation in the open group: " + std::string(dcGetErrorString(queued)) + " '" +
                message + "'; ";
    if (dcGroupEnd() != dcSuccess) return errors + "group end: " + dcGetLastError();
    const float expected = kRanks * (kRanks + 1) / 2.0f;
    if (out.front() != expected || out.back() != expected) errors += "wrong all-reduce result; ";
    // Once the group ran, nothing is in flight.
    if (dcCommSuspend(comm) != dcSuccess || dcCommResume(comm) != dcSuccess)
      errors += std::string("suspend after the group: ") + dcGetLastError() + "; ";
    return errors;
  });
  EXPECT_EQ(errors, "");
}

// Over UCX with ranks as processes: scratch the transport sent from and received into is unmapped
// by suspend and mapped again (maybe at the same address) after resume; results stay bit-identical
// to those of a communicator never suspended.
TEST(Suspend, UcxResultsMatchANeverSuspendedCommunicator) {
  if (const std::string why = dctest::transport_unavailable("ucx-all"); !why.empty()) GTEST_SKIP() << why;
  std::string errors = dctest::run_as_processes(
      kRanks, {{"DEEPCOMM_TRANSPORT", "ucx-all"}},
      [](int rank, int n, const dcUniqueId& id) {
        (void)n;
        dcComm_t comms[2] = {nullptr, nullptr};  // 0: suspended and resumed every round; 1: never
        if (dcCommInitRank(&comms[0], kRanks, &id, rank, nullptr) != dcSuccess ||
            dcCommSplit(comms[0], 0, rank, &comms[1], nullptr) != dcSuccess)
          return 2;
        dcRedOp_t ops[2] = {dcSum, dcSum};
        const float scalar = 0.25f;
        for (int c = 0; c < 2; ++c)
          if (dcRedOpCreatePreMulSum(&ops[c], &scalar, dcFloat32, comms[c]) != dcSuccess) return 3;
        std::vector<float> in(kCount), out[2] = {std::vector<float>(kCount), std::vector<float>(kCount)};
        int failures = 0;
        for (int round = 0; round < 3; ++round) {
          for (size_t i = 0; i < kCount; ++i)
            in[i] = 0.1f * (rank + 1) + 1e-3f * static_cast<float>((i * 7 + round) % 1013);
          for (int c = 0; c < 2; ++c)
            if (dcAllReduce(in.data(), out[c].data(), kCount, dcFloat32, ops[c], comms[c], nullptr) != dcSuccess) {
              std::fprintf(stderr, "rank %d: %s\n", rank, dcGetLastError());
              return 4;
            }
          if (std::memcmp(out[0].data(), out[1].data(), kCount * sizeof(float)) != 0) {
            std::fprintf(stderr, "rank %d round %d: results differ\n", rank, round);
            ++failures;
          }
          dcCommMemory_t during{};
          if (dcCommSuspend(comms[0]) != dcSuccess || dcCommMemory(comms[0], &during) != dcSuccess ||
              during.releasableBytes != 0 || during.suspended != 1 || dcCommResume(comms[0]) != dcSuccess) {
            std::fprintf(stderr, "rank %d round %d: suspend/resume: %s\n", rank, round, dcGetLastError());
            ++failures;
          }
        }
        dcCounters_t counters{};
        if (dcCommGetCounters(comms[0], &counters) != dcSuccess || !counters.ucxBytesSent || counters.shmBytesSent)
          ++failures;
        for (int c = 1; c >= 0; --c)
          if (dcCommDestroy(comms[c]) != dcSuccess) ++failures;
        return failures ? 1 : 0;
      },
      120);
  EXPECT_EQ(errors, "");
}

TEST(Suspend, BadInputGetsClearErrors) {
  dcCommMemory_t memory{};
  EXPECT_EQ(dcCommSuspend(nullptr), dcInvalidArgument);
  EXPECT_EQ(dcCommResume(nullptr), dcInvalidArgument);
  EXPECT_EQ(dcCommMemory(nullptr, &memory), dcInvalidArgument);
  std::string errors = dctest::run_as_threads(2, [](int, dcComm_t comm) -> std::string {
    std::string errors;
    if (dcCommMemory(comm, nullptr) != dcInvalidArgument || std::string(dcGetLastError()).empty())
      errors += "dcCommMemory without an output: no clear error; ";
    const dcResult_t resumed = dcCommResume(comm);
    if (resumed != dcInvalidUsage || std::string(dcGetLastError()).find("not suspended") == std::string::npos)
      errors += std::string("resume of a communicator never suspended: '") + dcGetLastError() + "'; ";
    return errors;
  });
  EXPECT_EQ(errors, "");
}

}  // namespace
