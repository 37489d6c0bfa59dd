#include <gtest/gtest.h>
#include <sys/wait.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "base/error.h"
#include "src/core/bootstrap.h"
#include "src/core/bootstrap/unique_id_layout.h"
#include "tests/bootstrap/blobs.h"
#include "tests/bootstrap/child_process.h"
#include "tests/support/test_port.h"

namespace dc {
namespace {

using test::blob_of;
using test::first_wrong_blob;
constexpr int kTimeoutMs = 10000;

struct Outcome {
  std::vector<std::string> blobs;
  dcResult_t code = dcSuccess;
  std::string message;
};

// Runs ranks [first, first + count) of nranks as threads, each with its own blob and nranks.
std::vector<Outcome> run_thread_ranks(const dcUniqueId& id, const std::vector<int>& ranks,
                                      const std::vector<int>& nranks_of, int timeout_ms) {
  std::vector<Outcome> outcomes(ranks.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ranks.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        outcomes[i].blobs =
            bootstrap_allgather(id, ranks[i], nranks_of[i], blob_of(ranks[i], nranks_of[i]), timeout_ms);
      } catch (const Error& e) {
        outcomes[i].code = e.code();
        outcomes[i].message = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return outcomes;
}

std::vector<Outcome> run_all_ranks_as_threads(const dcUniqueId& id, int nranks, int timeout_ms = kTimeoutMs) {
  std::vector<int> ranks, sizes(nranks, nranks);
  for (int r = 0; r < nranks; ++r) ranks.push_back(r);
  return run_thread_ranks(id, ranks, sizes, timeout_ms);
}

void expect_all_good(const std::vector<Outcome>& outcomes, int nranks) {
  for (size_t i = 0; i < outcomes.size(); ++i) {
    EXPECT_EQ(outcomes[i].code, dcSuccess) << "rank " << i << ": " << outcomes[i].message;
    EXPECT_EQ(first_wrong_blob(outcomes[i].blobs, nranks), -1) << "rank " << i;
  }
}

// A forked rank: exit 0 when it got every rank's blob.
int rank_process_body(const dcUniqueId& id, int rank, int nranks) {
  auto blobs = bootstrap_allgather(id, rank, nranks, blob_of(rank, nranks), kTimeoutMs);
  int wrong = first_wrong_blob(blobs, nranks);
  if (wrong >= 0) std::fprintf(stderr, "rank %d: blob of rank %d is wrong\n", rank, wrong);
  return wrong < 0 ? 0 : 1;
}

void expect_children_succeed(const std::vector<pid_t>& pids) {
  for (size_t i = 0; i < pids.size(); ++i) {
    int status = test::wait_child(pids[i], kTimeoutMs + 5000);
    EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "child " << i << " wait status " << status;
  }
}

class AllgatherSizes : public ::testing::TestWithParam<int> {};

TEST_P(AllgatherSizes, ThreadsAsRanks) {
  dcUniqueId id;
  make_unique_id(&id);
  expect_all_good(run_all_ranks_as_threads(id, GetParam()), GetParam());
}

// The parent made the id and hosts the root but is not a rank; the children fork right after.
TEST_P(AllgatherSizes, ForkedProcessesParentNotARank) {
  const int nranks = GetParam();
  dcUniqueId id;
  make_unique_id(&id);
  std::vector<pid_t> pids;
  for (int r = 0; r < nranks; ++r)
    pids.push_back(test::fork_child([&, r] { return rank_process_body(id, r, nranks); }));
  expect_children_succeed(pids);
}

TEST_P(AllgatherSizes, ForkedProcessesParentIsRankZero) {
  const int nranks = GetParam();
  dcUniqueId id;
  make_unique_id(&id);
  std::vector<pid_t> pids;
  for (int r = 1; r < nranks; ++r)
    pids.push_back(test::fork_child([&, r] { return rank_process_body(id, r, nranks); }));
  auto blobs = bootstrap_allgather(id, 0, nranks, blob_of(0, nranks), kTimeoutMs);
  EXPECT_EQ(first_wrong_blob(blobs, nranks), -1);
  expect_children_succeed(pids);
}

INSTANTIATE_TEST_SUITE_P(Bootstrap, AllgatherSizes, ::testing::Values(1, 2, 5, 8));

TEST(Allgather, SeveralRootsInOneProcessAtOnce) {
  dcUniqueId a, b;
  make_unique_id(&a);
  make_unique_id(&b);
  std::vector<Outcome> in_a, in_b;
  std::thread other([&] { in_b = run_all_ranks_as_threads(b, 3); });
  in_a = run_all_ranks_as_threads(a, 4);
  other.join();
  expect_all_good(in_a, 4);
  expect_all_good(in_b, 3);
}

// A child that forks while roots serve in the parent may make its own id and run its own root.
TEST(Allgather, ForkedChildHostsItsOwnRoot) {
  dcUniqueId parent_id;
  make_unique_id(&parent_id);
  pid_t pid = test::fork_child([] {
    dcUniqueId id;
    make_unique_id(&id);
    auto outcomes = run_all_ranks_as_threads(id, 3);
    for (const auto& o : outcomes)
      if (o.code != dcSuccess || first_wrong_blob(o.blobs, 3) >= 0) return 1;
    return 0;
  });
  expect_all_good(run_all_ranks_as_threads(parent_id, 2), 2);
  expect_children_succeed({pid});
}

class NcclCommId : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("NCCL_COMM_ID"); }
};

bool refused(const boost::asio::ip::tcp::endpoint& endpoint) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  boost::system::error_code ec;
  socket.connect(endpoint, ec);
  return ec == boost::asio::error::connection_refused;
}

TEST_F(NcclCommId, RankZeroHostsTheRootAtThatAddress) {
  const int port = test::reserved_port();
  const std::string comm_id = "127.0.0.1:" + std::to_string(port);
  setenv("NCCL_COMM_ID", comm_id.c_str(), 1);
  dcUniqueId id, again;
  make_unique_id(&id);
  make_unique_id(&again);
  RootAddress root = decode_root_address(id);
  EXPECT_TRUE(root.hosted_by_rank0);
  EXPECT_EQ(root.endpoint.port(), port);
  // Built independently by each process, so identical; nothing listens before rank 0 joins.
  EXPECT_EQ(0, std::memcmp(id.internal, again.internal, DC_UNIQUE_ID_BYTES));
  EXPECT_TRUE(refused(root.endpoint));
  // Rank 0 last, so that the others wait for its root; twice, so the port is reused.
  for (int round = 0; round < 2; ++round) expect_all_good(run_thread_ranks(id, {2, 1, 0}, {3, 3, 3}, kTimeoutMs), 3);
}

TEST_F(NcclCommId, Ipv6Loopback) {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor probe(io);
  boost::system::error_code ec;
  probe.open(boost::asio::ip::tcp::v6(), ec);
  if (!ec) probe.bind({boost::asio::ip::make_address("::1"), 0}, ec);
  if (ec) GTEST_SKIP() << "no IPv6 loopback here: " << ec.message();
  const int port = probe.local_endpoint().port();
  probe.close();
  setenv("NCCL_COMM_ID", ("[::1]:" + std::to_string(port)).c_str(), 1);
  dcUniqueId id;
  make_unique_id(&id);
  EXPECT_TRUE(decode_root_address(id).endpoint.address().is_v6());
  expect_all_good(run_all_ranks_as_threads(id, 2), 2);
}

TEST_F(NcclCommId, RootUnreachableWithinDeadline) {
  setenv("NCCL_COMM_ID", ("127.0.0.1:" + std::to_string(test::reserved_port())).c_str(), 1);
  dcUniqueId id;
  make_unique_id(&id);
  auto start = std::chrono::steady_clock::now();
  auto outcomes = run_thread_ranks(id, {1}, {2}, 500);  // rank 0 never comes
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(outcomes[0].code, dcSystemError);
  EXPECT_NE(outcomes[0].message.find("unreachable"), std::string::npos) << outcomes[0].message;
  EXPECT_LT(elapsed, std::chrono::milliseconds(1500));
}

TEST(AllgatherFailure, TimeoutNamesHowManyJoined) {
  dcUniqueId id;
  make_unique_id(&id);
  auto start = std::chrono::steady_clock::now();
  auto outcomes = run_thread_ranks(id, {0, 1}, {3, 3}, 1500);  // rank 2 never joins
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, std::chrono::milliseconds(1400));
  EXPECT_LT(elapsed, std::chrono::milliseconds(2500));
  for (const auto& o : outcomes) {
    EXPECT_EQ(o.code, dcSystemError);
    EXPECT_NE(o.message.find("timed out"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("2 of 3 ranks joined (missing ranks: 2)"), std::string::npos) << o.message;
  }
}

TEST(AllgatherFailure, RootDeadlineTellsTheRanksThatJoined) {
  setenv("DEEPCOMM_BOOTSTRAP_TIMEOUT", "300", 1);
  dcUniqueId id;
  make_unique_id(&id);
  unsetenv("DEEPCOMM_BOOTSTRAP_TIMEOUT");
  auto outcomes = run_thread_ranks(id, {1}, {2}, 5000);
  EXPECT_EQ(outcomes[0].code, dcSystemError);
  EXPECT_NE(outcomes[0].message.find("deadline of 300 ms"), std::string::npos) << outcomes[0].message;
  EXPECT_NE(outcomes[0].message.find("1 of 2 ranks joined"), std::string::npos) << outcomes[0].message;
}

void expect_all_fail(const std::vector<Outcome>& outcomes, dcResult_t code, const std::string& text) {
  for (const auto& o : outcomes) {
    EXPECT_EQ(o.code, code) << o.message;
    EXPECT_NE(o.message.find(text), std::string::npos) << o.message;
  }
}

TEST(AllgatherFailure, InconsistentNranks) {
  dcUniqueId id;
  make_unique_id(&id);
  expect_all_fail(run_thread_ranks(id, {0, 1}, {2, 3}, kTimeoutMs), dcInvalidUsage, "inconsistent nranks");
}

// The first claim of a rank stands: the second is turned away and the rendezvous completes.
TEST(AllgatherFailure, SecondClaimOfARankIsRefusedAlone) {
  dcUniqueId id;
  make_unique_id(&id);
  std::vector<Outcome> outcomes;
  std::thread claims([&] { outcomes = run_thread_ranks(id, {1, 1}, {3, 3}, kTimeoutMs); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both claims reach the root first
  auto others = run_thread_ranks(id, {0, 2}, {3, 3}, kTimeoutMs);
  claims.join();
  for (const auto& o : others) {
    EXPECT_EQ(o.code, dcSuccess) << o.message;
    EXPECT_EQ(first_wrong_blob(o.blobs, 3), -1);
  }
  int refused = 0;
  for (const auto& o : outcomes) {
    if (o.code == dcSuccess) {
      EXPECT_EQ(first_wrong_blob(o.blobs, 3), -1);
      continue;
    }
    ++refused;
    EXPECT_EQ(o.code, dcInvalidUsage);
    EXPECT_NE(o.message.find("rank 1 has already joined"), std::string::npos) << o.message;
  }
  EXPECT_EQ(refused, 1);
}

TEST(AllgatherFailure, RankOutOfRangeIsRejectedLocally) {
  dcUniqueId id;
  make_unique_id(&id);
  expect_all_fail(run_thread_ranks(id, {3}, {3}, kTimeoutMs), dcInvalidArgument, "out of range");
}

TEST(AllgatherFailure, SessionMismatchIsRejected) {
  dcUniqueId id;
  make_unique_id(&id);
  RootAddress root = decode_root_address(id);
  IdCredentials credentials = unique_id_credentials(id);
  credentials.session += 1;
  dcUniqueId forged = encode_unique_id(root, credentials);
  expect_all_fail(run_thread_ranks(forged, {0}, {1}, kTimeoutMs), dcInvalidUsage, "session");
}

TEST(AllgatherFailure, WrongSecretIsRejected) {
  dcUniqueId id;
  make_unique_id(&id);
  IdCredentials credentials = unique_id_credentials(id);
  credentials.secret.bytes[3] ^= 1;
  dcUniqueId forged = encode_unique_id(decode_root_address(id), credentials);
  // The root cannot prove the secret this rank holds: the rank refuses it before sending anything.
  expect_all_fail(run_thread_ranks(forged, {0}, {1}, kTimeoutMs), dcRemoteError, "did not prove knowledge");
}

}  // namespace
}  // namespace dc
