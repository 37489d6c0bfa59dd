// The rendezvous root against a hostile neighbour: 1000 connections that never learnt the secret
// (idle, noise, oversized claims, wrong secrets, forged proofs) cost little memory, no descriptors
// once gone, are never held beyond the cap or the deadline, and a real init after them succeeds.
#include <gtest/gtest.h>
#include <unistd.h>
#include <cstdio>

#include <thread>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "src/core/bootstrap.h"
#include "src/core/bootstrap/unique_id_layout.h"
#include "tests/security/strangers.h"

namespace dc::test {
namespace {

constexpr int kStrangers = 1000;
constexpr int kHeldAtOnce = 200;
constexpr size_t kMaxGrowth = 16u << 20;

void real_init_and_all_reduce(const dcUniqueId& id, int nranks) {
  std::vector<std::thread> ranks;
  std::vector<std::string> problems(nranks);
  for (int r = 0; r < nranks; ++r)
    ranks.emplace_back([&, r] {
      dcComm_t comm = nullptr;
      if (dcCommInitRank(&comm, nranks, &id, r, nullptr) != dcSuccess) {
        problems[r] = std::string("init: ") + dcGetLastError();
        return;
      }
      std::vector<float> data(4096, float(r + 1));
      if (dcAllReduce(data.data(), data.data(), data.size(), dcFloat32, dcSum, comm, nullptr) != dcSuccess)
        problems[r] = std::string("all-reduce: ") + dcGetLastError();
      else if (data[4095] != float(nranks * (nranks + 1) / 2)) problems[r] = "wrong sum " + std::to_string(data[4095]);
      dcCommDestroy(comm);
    });
  for (auto& t : ranks) t.join();
  for (int r = 0; r < nranks; ++r) EXPECT_EQ(problems[r], "") << "rank " << r;
}

TEST(RootStrangers, ThousandStrangersCostLittleAndRealInitSucceeds) {
  dcUniqueId id;
  ASSERT_EQ(dcGetUniqueId(&id), dcSuccess);
  const RootAddress root = decode_root_address(id);
  const uint64_t session = unique_id_session(id);
  const Target target = Target::tcp(root.endpoint.address().to_string(), root.endpoint.port());
  const Stranger kinds[] = {Stranger::Idle, Stranger::RandomBytes, Stranger::OversizedClaim, Stranger::WrongSecret,
                            Stranger::ForgedProof};

  const size_t resident_before = resident_bytes();
  const int fds_before = open_fds();
  size_t peak = resident_before;
  for (int played = 0; played < kStrangers; played += kHeldAtOnce) {
    std::vector<int> held;
    for (int i = 0; i < kHeldAtOnce; ++i) {
      const int fd = play(target, kinds[(played + i) % 5], session,
                          i % 2 ? handshake::Purpose::RootJoin : handshake::Purpose::RootStatus);
      ASSERT_GE(fd, 0) << "stranger " << played + i << " could not even connect";
      held.push_back(fd);
    }
    peak = std::max(peak, resident_bytes());
    // The root holds at most kMaxPending unproven connections: it closed the rest.
    const int cap = static_cast<int>(handshake::kMaxPending);
    EXPECT_LE(wait_until_open_at_most(held, cap, 3000), cap) << "batch at " << played;
    if (played + kHeldAtOnce >= kStrangers) {
      // ... and none beyond the handshake deadline.
      const int deadline_ms = int(std::chrono::milliseconds(handshake::kDeadline).count());
      EXPECT_EQ(wait_until_open_at_most(held, 0, deadline_ms + 2000), 0);
    }
    for (int fd : held) close(fd);
  }
  std::printf("%d strangers: resident memory %zu KiB -> peak %zu KiB (+%zu KiB); descriptors %d before\n", kStrangers,
              resident_before >> 10, peak >> 10, (peak - resident_before) >> 10, fds_before);
  EXPECT_LT(peak - resident_before, kMaxGrowth) << "resident memory grew from " << resident_before << " to " << peak;
  // The root keeps no descriptor of a stranger that left.
  EXPECT_LE(open_fds(), fds_before + 2) << "descriptors before " << fds_before;
  real_init_and_all_reduce(id, 4);
}

// A rank already at the root cannot be displaced: another claim of its rank is refused.
TEST(RootStrangers, ProvenDuplicateClaimIsRefusedAlone) {
  dcUniqueId id;
  ASSERT_EQ(dcGetUniqueId(&id), dcSuccess);
  std::vector<std::thread> ranks;
  std::vector<dcResult_t> results(3, dcInternalError);
  std::vector<std::string> messages(3);
  auto join = [&](int slot, int rank) {
    dcComm_t comm = nullptr;
    results[slot] = dcCommInitRank(&comm, 2, &id, rank, nullptr);
    messages[slot] = dcGetLastError();
    if (comm) dcCommDestroy(comm);
  };
  ranks.emplace_back(join, 0, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ranks.emplace_back(join, 1, 1);  // the impostor: same secret, same rank, later
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ranks.emplace_back(join, 2, 0);
  for (auto& t : ranks) t.join();
  EXPECT_EQ(results[0], dcSuccess) << messages[0];
  EXPECT_EQ(results[2], dcSuccess) << messages[2];
  EXPECT_EQ(results[1], dcInvalidUsage);
  EXPECT_NE(messages[1].find("already joined"), std::string::npos) << messages[1];
}

}  // namespace
}  // namespace dc::test
