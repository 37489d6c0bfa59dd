// Memory registration and windows: handles are tracked per communicator, registered buffers work
// in collectives (over shared memory and UCX), and wrong, foreign or released handles are refused.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "tests/support/collective_check.h"
#include "tests/support/transport_probe.h"

namespace {

TEST(Registration, HandlesAreCheckedAndBuffersWork) {
  std::vector<dcComm_t> others(1);
  ASSERT_EQ(dcCommInitAll(others.data(), 1), dcSuccess);
  dcComm_t foreign = others[0];
  std::string errors = dctest::run_as_threads(2, [foreign](int rank, dcComm_t comm) -> std::string {
    std::vector<double> buf(1 << 16, rank + 1.0);
    void* handle = nullptr;
    if (dcCommRegister(comm, buf.data(), buf.size() * sizeof(double), &handle) != dcSuccess || !handle)
      return dcGetLastError();
    if (dcAllReduce(buf.data(), buf.data(), buf.size(), dcFloat64, dcSum, comm, nullptr) != dcSuccess)
      return dcGetLastError();
    if (buf[0] != 3.0) return "all-reduce on a registered buffer";
    if (dcCommDeregister(foreign, handle) != dcInvalidArgument) return "foreign communicator accepted";
    dcWindow_t win = nullptr;
    if (dcCommWindowRegister(comm, buf.data(), 4096, &win, 7) != dcInvalidArgument) return "bad flags accepted";
    if (dcCommWindowRegister(comm, buf.data(), 4096, &win, 1) != dcSuccess || !win) return dcGetLastError();
    if (dcCommDeregister(comm, win) != dcInvalidArgument) return "window released as a registration";
    if (dcCommWindowDeregister(comm, reinterpret_cast<dcWindow_t>(handle)) != dcInvalidArgument)
      return "registration released as a window";
    if (dcCommDeregister(comm, handle) != dcSuccess) return dcGetLastError();
    if (dcCommDeregister(comm, handle) != dcInvalidArgument) return "released twice";
    if (dcCommRegister(comm, nullptr, 8, &handle) != dcInvalidArgument) return "NULL buffer accepted";
    // The window is left registered: destroying the communicator releases it.
    return "";
  });
  EXPECT_EQ(errors, "");
  EXPECT_EQ(dcCommDestroy(foreign), dcSuccess);
}

// Mappings of dcMemAlloc memory in this process: its own allocations plus the peers' regions it mapped.
int memfd_mappings() {
  std::ifstream maps("/proc/self/maps");
  int n = 0;
  for (std::string line; std::getline(maps, line);) n += line.find("memfd:deepcomm-mem") != std::string::npos;
  return n;
}

// Where cross-memory attach is off (DEEPCOMM_SHM_CMA=0), registered dcMemAlloc memory is still
// read in place: its memfd goes to the peers once, and every large message is copied straight out
// of their mapping of it (counted as shmBytesFromRegistered), none through the segment. The same
// run on unregistered memory goes through the segment, which shows the counters tell them apart.
struct RegisteredCase {
  int nranks;
  bool registered;
};

class RegisteredWithoutCma : public ::testing::TestWithParam<RegisteredCase> {};

TEST_P(RegisteredWithoutCma, AllReduceAndAllGatherReadRegisteredMemoryInPlace) {
  const RegisteredCase param = GetParam();
  const size_t count = size_t{1} << 20;  // 4 MiB: rendezvous-sized ring chunks
  std::string errors = dctest::run_as_processes(
      param.nranks, {{"DEEPCOMM_TRANSPORT", "shm"}, {"DEEPCOMM_SHM_CMA", "0"}},
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm = nullptr;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) {
          fprintf(stderr, "init: %s\n", dcGetLastError());
          return 2;
        }
        float* send = nullptr;
        float* gathered = nullptr;
        if (dcMemAlloc(reinterpret_cast<void**>(&send), count * sizeof(float)) != dcSuccess ||
            dcMemAlloc(reinterpret_cast<void**>(&gathered), n * count * sizeof(float)) != dcSuccess) {
          fprintf(stderr, "dcMemAlloc: %s\n", dcGetLastError());
          return 2;
        }
        void* send_handle = nullptr;
        void* gathered_handle = nullptr;
        if (param.registered &&
            (dcCommRegister(comm, send, count * sizeof(float), &send_handle) != dcSuccess ||
             dcCommRegister(comm, gathered, n * count * sizeof(float), &gathered_handle) != dcSuccess)) {
          fprintf(stderr, "register: %s\n", dcGetLastError());
          return 2;
        }
        int failures = 0;
        for (int round = 0; round < 3; ++round) {
          for (size_t i = 0; i < count; ++i) send[i] = static_cast<float>((i % 97) + rank + round);
          if (dcAllReduce(send, send, count, dcFloat32, dcSum, comm, nullptr) != dcSuccess ||
              dcAllGather(send, gathered, count, dcFloat32, comm, nullptr) != dcSuccess) {
            fprintf(stderr, "rank %d: %s\n", rank, dcGetLastError());
            return 1;
          }
          // Every rank's block of the all-gather is the all-reduced vector.
          for (size_t i = 0; i < n * count; ++i) {
            const size_t k = i % count;
            const float expected = static_cast<float>(n * ((k % 97) + round) + n * (n - 1) / 2);
            if (gathered[i] != expected && failures++ < 3)
              fprintf(stderr, "rank %d: element %zu is %g, expected %g\n", rank, i, gathered[i], expected);
          }
        }
        dcCounters_t c{};
        if (dcCommGetCounters(comm, &c) != dcSuccess) return 1;
        const bool expected_path = param.registered ? (c.shmBytesStaged == 0 && c.shmBytesFromRegistered > 0)
                                                    : (c.shmBytesStaged > 0 && c.shmBytesFromRegistered == 0);
        if (!expected_path) {
          fprintf(stderr, "rank %d: %llu bytes received through the segment, %llu from registered memory\n", rank,
                  static_cast<unsigned long long>(c.shmBytesStaged),
                  static_cast<unsigned long long>(c.shmBytesFromRegistered));
          ++failures;
        }
        if (param.registered) {
          // Peers' regions are mapped here until they deregister them; the notice travels ahead
          // of their next message to this rank.
          const int mapped_before = memfd_mappings();
          float token = 1.0f;  // a barrier: nobody deregisters before everyone counted
          if (dcAllReduce(&token, &token, 1, dcFloat32, dcSum, comm, nullptr) != dcSuccess) ++failures;
          if (dcCommDeregister(comm, send_handle) != dcSuccess || dcCommDeregister(comm, gathered_handle) != dcSuccess)
            ++failures;
          std::vector<float> plain(count, 1.0f);
          if (dcAllReduce(plain.data(), plain.data(), count, dcFloat32, dcSum, comm, nullptr) != dcSuccess) ++failures;
          if (mapped_before <= 2 || memfd_mappings() != 2) {
            fprintf(stderr, "rank %d: %d dcMemAlloc mappings before deregistration, %d after (own: 2)\n", rank,
                    mapped_before, memfd_mappings());
            ++failures;
          }
        }
        if (dcCommDestroy(comm) != dcSuccess) ++failures;
        dcMemFree(send);
        dcMemFree(gathered);
        return failures ? 1 : 0;
      },
      120);
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(Shm, RegisteredWithoutCma,
                         ::testing::Values(RegisteredCase{2, true}, RegisteredCase{4, true}, RegisteredCase{8, true},
                                           RegisteredCase{4, false}),
                         [](const auto& info) {
                           return std::string(info.param.registered ? "registered_" : "unregistered_") +
                                  std::to_string(info.param.nranks);
                         });

// Over UCX, buffers registered with the communicator (ucp_mem_map) and dcMemAlloc memory (mapped
// by the transport on first use) carry correct data in rendezvous-sized messages, also after
// deregistration, and after dcMemFree and a new dcMemAlloc that may land at the same address.
TEST(UcxRegistration, RegisteredAndAllocatedMemoryCarryCorrectData) {
  if (const std::string why = dctest::transport_unavailable("ucx-all"); !why.empty()) GTEST_SKIP() << why;
  const size_t count = size_t{1} << 20;
  std::string errors = dctest::run_as_processes(
      3, {{"DEEPCOMM_TRANSPORT", "ucx-all"}},
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm = nullptr;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        std::vector<float> plain(count);
        int failures = 0;
        for (int round = 0; round < 4; ++round) {
          float* allocated = nullptr;
          if (dcMemAlloc(reinterpret_cast<void**>(&allocated), count * sizeof(float)) != dcSuccess) return 3;
          const bool registered = round % 2 == 0;
          void* handles[2] = {nullptr, nullptr};
          if (registered && (dcCommRegister(comm, allocated, count * sizeof(float), &handles[0]) != dcSuccess ||
                             dcCommRegister(comm, plain.data(), count * sizeof(float), &handles[1]) != dcSuccess))
            return 4;
          for (size_t i = 0; i < count; ++i) allocated[i] = plain[i] = static_cast<float>((i % 89) + rank + round);
          if (dcAllReduce(allocated, allocated, count, dcFloat32, dcSum, comm, nullptr) != dcSuccess ||
              dcAllReduce(plain.data(), plain.data(), count, dcFloat32, dcSum, comm, nullptr) != dcSuccess) {
            fprintf(stderr, "rank %d: %s\n", rank, dcGetLastError());
            return 1;
          }
          for (size_t i = 0; i < count; ++i) {
            const float expected = static_cast<float>(n * ((i % 89) + round) + n * (n - 1) / 2);
            if ((allocated[i] != expected || plain[i] != expected) && failures++ < 3)
              fprintf(stderr, "rank %d round %d: element %zu is %g / %g, expected %g\n", rank, round, i, allocated[i],
                      plain[i], expected);
          }
          if (registered &&
              (dcCommDeregister(comm, handles[0]) != dcSuccess || dcCommDeregister(comm, handles[1]) != dcSuccess))
            ++failures;
          if (dcMemFree(allocated) != dcSuccess) ++failures;
        }
        dcCounters_t c{};
        if (dcCommGetCounters(comm, &c) != dcSuccess || !c.ucxBytesSent || c.shmBytesSent || c.tcpBytesSent) ++failures;
        if (dcCommDestroy(comm) != dcSuccess) ++failures;
        return failures ? 1 : 0;
      },
      120);
  EXPECT_EQ(errors, "");
}

}  // namespace
