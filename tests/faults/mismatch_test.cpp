// Ranks that call mismatched operations (another collective, count, datatype, op or root, or a
// different number of calls) all get dcInvalidUsage with a message naming the calls, instead of a
// hang or corrupted data (a rank whose part of the operation never met the odd call may finish it,
// and calls after it, until the failing ranks' notice reaches it): 2, 4 and 8 ranks over shared
// memory and TCP, 2 and 4 over UCX; the odd rank last, in the middle, and the whole upper half. A
// call the last rank makes alone (a broadcast from itself, which only sends) fails instead of
// succeeding.
#include <gtest/gtest.h>

#include <chrono>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "tests/faults/fault_support.h"
#include "tests/support/collective_check.h"

namespace {

struct MismatchSetup {
  int nranks;
  const char* transport;
};

// What the odd rank calls instead of what the others call (a float sum all-reduce of
// 4096 elements; a broadcast from root 0 for the root case), and words every rank's message must
// contain.
struct Deviation {
  const char* name;
  std::vector<std::string> words;
};

constexpr size_t kLargeCount = 1 << 20;

dcResult_t call(dcComm_t comm, int deviation, bool odd, std::vector<float>& in, std::vector<float>& out) {
  if (deviation == 4) return dcBroadcast(in.data(), out.data(), 4096, dcFloat32, odd ? 1 : 0, comm, nullptr);
  if (!odd) return dcAllReduce(in.data(), out.data(), 4096, dcFloat32, dcSum, comm, nullptr);
  switch (deviation) {
    case 0: return dcBroadcast(in.data(), out.data(), 4096, dcFloat32, 0, comm, nullptr);
    case 1: return dcAllReduce(in.data(), out.data(), 2048, dcFloat32, dcSum, comm, nullptr);
    case 2: return dcAllReduce(in.data(), out.data(), 4096, dcInt32, dcSum, comm, nullptr);
    // Large enough for the engine while the others' call fits the flat board (shm): the paths differ.
    case 5: return dcAllReduce(in.data(), out.data(), kLargeCount, dcFloat32, dcSum, comm, nullptr);
    default: return dcAllReduce(in.data(), out.data(), 4096, dcFloat32, dcMax, comm, nullptr);
  }
}

const Deviation kDeviations[] = {{"collective", {"AllReduce", "Broadcast"}},
                                 {"count", {"count=4096", "count=2048"}},
                                 {"datatype", {"float", "int32"}},
                                 {"op", {"sum", "max"}},
                                 {"root", {"root=0", "root=1"}},
                                 {"path", {"count=4096", "count=1048576"}}};

// Failures name the setting, not its bytes.
void PrintTo(const MismatchSetup& s, std::ostream* os) { *os << s.nranks << " ranks over " << s.transport; }

class Mismatch : public ::testing::TestWithParam<MismatchSetup> {};

TEST_P(Mismatch, EveryRankGetsInvalidUsageNamingBothCalls) {
  const MismatchSetup s = GetParam();
  if (const std::string why = dctest::transport_unavailable(s.transport); !why.empty()) GTEST_SKIP() << why;
  // Where the odd ranks sit decides which ranks meet their call: the last one is the signature
  // ring's neighbour of rank 0; one in the middle leaves a broadcast's root and the rank after it
  // finishing calls until the notice comes; when the upper half calls otherwise, the two halves
  // differ across one edge of the signature ring only, the one from rank n/2 to the rank below it.
  struct OddRanks {
    int first, last;
  };
  std::vector<OddRanks> odd_sets = {{s.nranks - 1, s.nranks - 1}};
  if (s.nranks > 2) odd_sets.insert(odd_sets.end(), {{s.nranks / 2, s.nranks / 2}, {s.nranks / 2, s.nranks - 1}});
  for (const OddRanks odd : odd_sets) {
    for (int d = 0; d < 6; ++d) {
      std::string errors = dctest::run_as_processes(
          s.nranks, {{"DEEPCOMM_TRANSPORT", s.transport}, {"DEEPCOMM_TIMEOUT", "30"}},
          [&](int rank, int n, const dcUniqueId& id) {
            dcComm_t comm;
            if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
            std::vector<float> in(kLargeCount, 1.0f), out(kLargeCount, 0.0f);
            auto start = std::chrono::steady_clock::now();
            // A rank whose part never met the odd call (a broadcast's root, the rank after it) may
            // finish it, with the data its own call asked for, and its next calls until the
            // failing ranks' notice arrives; from then on its calls report the mismatch.
            dcResult_t r = dcSuccess;
            while (r == dcSuccess && dctest::seconds_since(start) <= 5)
              r = call(comm, d, rank >= odd.first && rank <= odd.last, in, out);
            const std::string message = dcGetLastError();
            if (r != dcInvalidUsage || dctest::seconds_since(start) > 5) {
              fprintf(stderr, "rank %d (%s): result %d: %s\n", rank, kDeviations[d].name, r, message.c_str());
              return 3;
            }
            for (const auto& word : kDeviations[d].words)
              if (message.find(word) == std::string::npos) {
                fprintf(stderr, "rank %d (%s): message lacks '%s': %s\n", rank, kDeviations[d].name, word.c_str(),
                        message.c_str());
                return 4;
              }
            dcCommDestroy(comm);
            return 0;
          },
          60);
      EXPECT_EQ(errors, "") << kDeviations[d].name << ", odd ranks " << odd.first << " to " << odd.last;
    }
  }
}

TEST_P(Mismatch, FewerCallsOnOneRankIsInvalidUsage) {
  const MismatchSetup s = GetParam();
  if (const std::string why = dctest::transport_unavailable(s.transport); !why.empty()) GTEST_SKIP() << why;
  std::string errors = dctest::run_as_processes(
      s.nranks, {{"DEEPCOMM_TRANSPORT", s.transport}},
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        std::vector<float> in(4096, 1.0f), out(4096, 0.0f);
        const int calls = rank == n - 1 ? 1 : 2;  // the last rank stops after one call
        for (int i = 0; i < calls; ++i) {
          dcResult_t r = dcAllReduce(in.data(), out.data(), 4096, dcFloat32, dcSum, comm, nullptr);
          if (i == 0 && r != dcSuccess) {
            fprintf(stderr, "rank %d: first call: %d %s\n", rank, r, dcGetLastError());
            return 3;
          }
          if (i == 1 && (r != dcInvalidUsage ||
                         std::string(dcGetLastError()).find("different number of calls") == std::string::npos)) {
            fprintf(stderr, "rank %d: %d %s\n", rank, r, dcGetLastError());
            return 4;
          }
        }
        dcCommDestroy(comm);
        return 0;
      },
      60);
  EXPECT_EQ(errors, "");
}

// The last rank makes one call more than the others: a broadcast from itself, whose plan only
// sends. The signature ring keeps its closing edge for such a plan (src/plan/opening_messages.h),
// so the call cannot end alone: it fails once the others leave, instead of returning success.
TEST_P(Mismatch, AnExtraCallOfTheLastRankDoesNotSucceedAlone) {
  const MismatchSetup s = GetParam();
  if (const std::string why = dctest::transport_unavailable(s.transport); !why.empty()) GTEST_SKIP() << why;
  std::string errors = dctest::run_as_processes(
      s.nranks, {{"DEEPCOMM_TRANSPORT", s.transport}, {"DEEPCOMM_FLAT_BYTES", "0"}},
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        std::vector<float> in(4096, 1.0f), out(4096, 0.0f);
        if (dcAllReduce(in.data(), out.data(), 4096, dcFloat32, dcSum, comm, nullptr) != dcSuccess) return 3;
        if (rank == n - 1) {
          const dcResult_t r = dcBroadcast(in.data(), out.data(), 4096, dcFloat32, rank, comm, nullptr);
          if (r == dcSuccess) {
            fprintf(stderr, "rank %d: a broadcast no other rank called returned success\n", rank);
            return 4;
          }
        } else {
          // Leave while the last rank's call is in flight (earlier or later, it must fail too).
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
        }
        dcCommDestroy(comm);
        return 0;
      },
      60);
  EXPECT_EQ(errors, "");
}

INSTANTIATE_TEST_SUITE_P(Transports, Mismatch,
                         ::testing::Values(MismatchSetup{2, "shm"}, MismatchSetup{4, "shm"}, MismatchSetup{8, "shm"},
                                           MismatchSetup{2, "tcp"}, MismatchSetup{4, "tcp"}, MismatchSetup{8, "tcp"},
                                           MismatchSetup{2, "ucx-all"}, MismatchSetup{4, "ucx-all"}),
                         [](const auto& info) {
                           return dctest::test_name(info.param.transport) + "_" + std::to_string(info.param.nranks);
                         });

}  // namespace
