// The transport scenarios over UCX, on two processes (UCX has one worker per process), over UCX's
// TCP transport between ranks of different host identities (endpoints in peer-failure mode) and
// over its shared memory on one host (no peer-failure mode there: the control socket reports
// death). Skipped, saying why, where UCX is absent or cannot start.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <boost/asio/ip/tcp.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ostream>

#include "base/error.h"
#include "tests/support/transport_probe.h"
#include "tests/transports/scenarios.h"
#include "tests/transports/two_ranks.h"
#include "transports/common/eager_credit.h"
#include "transports/transport.h"
#ifdef DEEPCOMM_TEST_UCX_WORKER
#include "transports/ucx/ucx_channel.h"
#include "transports/ucx/ucx_policy.h"
#include "transports/ucx/ucx_worker.h"
#endif

namespace dc::test {
namespace {

struct UcxSetup {
  const char* tls;      // UCX_TLS
  bool separate_hosts;  // each rank its own host identity
};

// Failures name the setting, not its bytes.
void PrintTo(const UcxSetup& s, std::ostream* os) {
  *os << "UCX_TLS=" << s.tls << (s.separate_hosts ? ", two hosts" : ", one host");
}

TransportFactory ucx(bool separate_hosts) {
  return [separate_hosts](const TransportOptions& o) {
    TransportOptions options = o;
    if (separate_hosts) options.host_id += "-" + std::to_string(o.rank);
    return make_ucx_transport(options);
  };
}

// Why UCX cannot run here ("" when it can), found in a child process so that this one starts no
// UCX of its own before the scenarios fork.
std::string ucx_unavailable() {
  return dctest::reason_from_child(
      [] {
        try {
          RankIo io;
          io.call([&] { make_ucx_transport(TransportOptions{&io.io(), 0, 1, "h"}); });
        } catch (const std::exception& e) {
          return std::string(e.what());
        }
        return std::string();
      },
      "probing UCX crashed");
}

const std::string& unavailable() {
  static const std::string why = ucx_unavailable();
  return why;
}

// A flush ends once every message sent before it left this side for good: a rendezvous message
// (its payload stays here until the peer takes it) only once the peer took it. A rank flushes
// before it exits, and a message still waiting for the peer would die with it. Rank 0 sends a
// rendezvous message that rank 1 receives only when told to, and flushes: the flush must wait.
std::string flush_waits_for_a_message_not_yet_taken(RankContext& ctx) {
  constexpr size_t kSize = EagerCredit::kEagerMax + 1;  // rendezvous
  constexpr uint64_t kSeed = 7001;
  const Tag big{7, 1, 0}, go{7, 2, 0}, closed{7, 3, 0};
  if (ctx.rank == 1) {
    char one = 0;
    OpResult g = ctx.recv(go, &one, 1).wait();
    SCENARIO_CHECK(ctx, g.status.ok(), describe(g));
    char* in = ctx.buffer(kSize);
    OpResult m = ctx.recv(big, in, kSize).wait();
    SCENARIO_CHECK(ctx, m.status.ok() && m.bytes == kSize, describe(m));
    SCENARIO_CHECK(ctx, check_pattern(in, kSize, kSeed).empty(), "payload differs");
    char dummy = 0;  // fails once rank 0's close arrived
    OpResult c = ctx.recv(closed, &dummy, 1).wait();
    SCENARIO_CHECK(ctx, c.status.code == dcRemoteError, "expected the close to fail this receive: " + describe(c));
    return "";
  }
  char* out = ctx.buffer(kSize);
  fill_pattern(out, kSize, kSeed);
  PendingOp sent = ctx.send(big, out, kSize);
  PendingOp flushed;
  auto conn = ctx.conn;
  ctx.io->call([conn, done = flushed.completion()]() mutable { conn->flush([done] { done(Status::success(), 0); }); });
  OpResult early = flushed.wait(300);
  char one = 1;
  OpResult g = ctx.send(go, &one, 1).wait();
  SCENARIO_CHECK(ctx, g.status.ok(), describe(g));
  SCENARIO_CHECK(ctx, early.status.code == dcInProgress, "the flush ended before the peer took the message");
  OpResult s = sent.wait();
  SCENARIO_CHECK(ctx, s.status.ok(), describe(s));
  OpResult f = flushed.wait(10000);
  SCENARIO_CHECK(ctx, f.status.ok(), "the flush did not end once the peer took the message: " + describe(f));
  ctx.io->call([conn] { conn->close(Status::failure(dcRemoteError, "closed by the test")); });
  return "";
}

#ifdef DEEPCOMM_TEST_UCX_WORKER
// The user frees a buffer and maps another at the same address between transfers, on both sides:
// every message carries the bytes of its own buffer, nothing read or written through a stale
// registration. In place (one host, UCX's shared memory: the receiver pulls) the cache registered
// the buffers and UCX's memory events dropped each unmapped one's registration; over UCX's tcp
// (the sender pushes) the payloads were staged and nothing was registered.
std::string reused_addresses(RankContext& ctx, bool in_place) {
  constexpr size_t kSize = EagerCredit::kEagerMax * 16;  // rendezvous
  constexpr int kRounds = 4;
  auto map_at = [](void* at) {
    void* p =
        mmap(at, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
    return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  };
  char* buf = map_at(nullptr);
  SCENARIO_CHECK(ctx, buf, "mmap failed");
  for (int round = 0; round < kRounds; ++round) {
    const Tag tag{8, static_cast<uint64_t>(round + 1), 0};
    const uint64_t seed = 8100 + round;
    if (ctx.rank == 0) {
      fill_pattern(buf, kSize, seed);
      OpResult s = ctx.send(tag, buf, kSize).wait();
      SCENARIO_CHECK(ctx, s.status.ok(), "round " + std::to_string(round) + ": " + describe(s));
    } else {
      OpResult r = ctx.recv(tag, buf, kSize).wait();
      SCENARIO_CHECK(ctx, r.status.ok() && r.bytes == kSize, "round " + std::to_string(round) + ": " + describe(r));
      SCENARIO_CHECK(ctx, check_pattern(buf, kSize, seed).empty(),
                     "round " + std::to_string(round) + ": payload differs");
    }
    SCENARIO_CHECK(ctx, munmap(buf, kSize) == 0, "munmap failed");
    char* again = map_at(buf);
    SCENARIO_CHECK(ctx, again == buf, "the same address could not be mapped again");
  }
  munmap(buf, kSize);
  UcxRegistrationCache::Stats stats;
  ctx.io->call([&] { stats = UcxWorker::get(ctx.io->io())->registration_stats(); });
  const std::string seen = "registrations " + std::to_string(stats.registrations) + ", invalidated " +
                           std::to_string(stats.invalidated) + ", hits " + std::to_string(stats.hits);
  if (!in_place) {
    SCENARIO_CHECK(ctx, stats.registrations == 0, "staged connection registered ordinary memory: " + seen);
    return "";
  }
  // Each round's buffer is new memory at the old address: registered afresh, the old one dropped.
  SCENARIO_CHECK(ctx, stats.registrations >= kRounds && stats.invalidated >= kRounds - 1 && stats.hits == 0,
                 "expected a fresh registration per round: " + seen);
  return "";
}
#endif

#ifdef DEEPCOMM_TEST_UCX_WORKER
// Where the connection moves ordinary memory in place, a payload longer than two segments of UCX's
// shared memory is pulled straight into the receive (rendezvous; both buffers registered through
// the cache), and one up to that length goes eagerly (staged: nothing registered). Over a staged
// connection nothing is ever registered.
std::string eager_up_to_two_segments_in_place(RankContext& ctx, bool in_place) {
  const size_t sizes[] = {UcxChannel::kInPlaceEagerMax, UcxChannel::kInPlaceEagerMax + 1};
  uint64_t registrations[2] = {0, 0};
  for (size_t i = 0; i < std::size(sizes); ++i) {
    const Tag tag{9, i + 1, 0};
    const uint64_t seed = 9100 + i;
    char* buf = ctx.buffer(sizes[i]);
    if (ctx.rank == 0) {
      fill_pattern(buf, sizes[i], seed);
      OpResult s = ctx.send(tag, buf, sizes[i]).wait();
      SCENARIO_CHECK(ctx, s.status.ok(), describe(s));
    } else {
      OpResult r = ctx.recv(tag, buf, sizes[i]).wait();
      SCENARIO_CHECK(ctx, r.status.ok() && r.bytes == sizes[i], describe(r));
      SCENARIO_CHECK(ctx, check_pattern(buf, sizes[i], seed).empty(), "payload differs");
    }
    ctx.io->call([&] { registrations[i] = UcxWorker::get(ctx.io->io())->registration_stats().registrations; });
  }
  const std::string seen =
      "registrations after each message: " + std::to_string(registrations[0]) + ", " + std::to_string(registrations[1]);
  SCENARIO_CHECK(ctx, registrations[0] == 0, "the eager payload was registered: " + seen);
  SCENARIO_CHECK(ctx, in_place ? registrations[1] >= 1 : registrations[1] == 0, seen);
  return "";
}
#endif

class UcxTwoRanks : public ::testing::TestWithParam<UcxSetup> {
 protected:
  void SetUp() override {
    if (!unavailable().empty()) GTEST_SKIP() << "UCX unavailable: " << unavailable();
    setenv("UCX_TLS", GetParam().tls, 1);
  }
  void TearDown() override { unsetenv("UCX_TLS"); }
  std::string run(const Scenario& scenario, RunOptions options = {}) {
    return run_two_ranks(RankMode::Processes, ucx(GetParam().separate_hosts), scenario, options);
  }
};

TEST_P(UcxTwoRanks, SizesBothWays) { EXPECT_EQ("", run(sizes_both_ways)); }
TEST_P(UcxTwoRanks, PiecesByDefault) { EXPECT_EQ("", run(pieces_by_default)); }
TEST_P(UcxTwoRanks, TagsMatchedNotOrder) { EXPECT_EQ("", run(reverse_tags)); }
TEST_P(UcxTwoRanks, UnexpectedMessages) { EXPECT_EQ("", run(unexpected_messages)); }
TEST_P(UcxTwoRanks, CancelledReceives) { EXPECT_EQ("", run(cancelled_receives)); }
TEST_P(UcxTwoRanks, LateMessagesOfACancelledOperation) { EXPECT_EQ("", run(late_messages_of_cancelled)); }
TEST_P(UcxTwoRanks, SentThenClosed) { EXPECT_EQ("", run(sent_then_closed, RunOptions{false, true})); }
TEST_P(UcxTwoRanks, FlushWaitsForAMessageNotYetTaken) {
  EXPECT_EQ("", run(flush_waits_for_a_message_not_yet_taken, RunOptions{false, true}));
}
TEST_P(UcxTwoRanks, ShortAndTooLong) { EXPECT_EQ("", run(short_and_too_long)); }
TEST_P(UcxTwoRanks, PeerKilledMidTransfer) { EXPECT_EQ("", run(peer_killed, RunOptions{true})); }
#ifdef DEEPCOMM_TEST_UCX_WORKER
TEST_P(UcxTwoRanks, InPlaceEagerOnlyUpToTwoSegments) {
  const bool in_place = !GetParam().separate_hosts;  // sm on one host; tcp between two
  EXPECT_EQ("", run([in_place](RankContext& ctx) { return eager_up_to_two_segments_in_place(ctx, in_place); }));
}
TEST_P(UcxTwoRanks, AddressesReusedAfterUnmapNeverServedStale) {
  const bool in_place = !GetParam().separate_hosts;  // sm on one host; tcp between two
  EXPECT_EQ("", run([in_place](RankContext& ctx) { return reused_addresses(ctx, in_place); }));
}
#endif

INSTANTIATE_TEST_SUITE_P(Tls, UcxTwoRanks, ::testing::Values(UcxSetup{"tcp", true}, UcxSetup{"sm", false}),
                         [](const auto& info) {
                           return std::string(info.param.tls) +
                                  (info.param.separate_hosts ? "_two_hosts" : "_one_host");
                         });

class UcxTransport : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!unavailable().empty()) GTEST_SKIP() << "UCX unavailable: " << unavailable();
  }
};

TEST_F(UcxTransport, ConnectDeadlines) {
  // A control port that was just free: nobody listens there.
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor probe(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const unsigned short port = probe.local_endpoint().port();
  probe.close();
  EXPECT_EQ("", connect_deadlines(ucx(false), "0;127.0.0.1:" + std::to_string(port) + ";00"));
}

TEST_F(UcxTransport, WrongSessionIsRefused) { EXPECT_EQ("", wrong_session(ucx(false))); }

TEST_F(UcxTransport, MalformedAddressFails) { EXPECT_EQ("", connect_deadlines(ucx(false), "not-an-address")); }

TEST_F(UcxTransport, AddressNamesHostControlSocketAndWorker) {
  RankIo io;
  std::unique_ptr<Transport> t;
  io.call([&] { t = make_ucx_transport(TransportOptions{&io.io(), 0, 1, "h"}); });
  const std::string a = t->address();
  const auto first = a.find(';'), second = a.find(';', first + 1);
  ASSERT_NE(second, std::string::npos) << a;
  EXPECT_EQ(first, 16u) << a;
  EXPECT_NE(a.substr(first + 1, second - first - 1).find(':'), std::string::npos) << a;
  EXPECT_GT(a.size() - second - 1, 16u) << "worker address " << a;
  EXPECT_STREQ(t->name(), "ucx");
  io.call([&] { t.reset(); });
}

#ifdef DEEPCOMM_TEST_UCX_WORKER
// Which connections move ordinary memory in place: where UCX_TLS lets the receiver pull the
// payload (cross-memory attach on one host; RDMA between hosts, and this machine has no RDMA port).
TEST(UcxInPlacePolicy, FollowsUcxTlsAndTheSetting) {
  struct Case {
    const char* tls;  // nullptr: unset
    const char* setting;
    bool same_host;
    bool in_place;
  };
  std::error_code no_sysfs;
  const bool rdma =
      std::filesystem::directory_iterator("/sys/class/infiniband", no_sysfs) != std::filesystem::directory_iterator();
  const Case cases[] = {
      {nullptr, nullptr, true, true},   {"all", nullptr, true, true},     {"sm", nullptr, true, true},
      {"tcp", nullptr, true, false},    {"tcp,cma", nullptr, true, true}, {"posix,sysv", nullptr, true, false},
      {"^sm", nullptr, true, false},    {"^knem", nullptr, true, true},   {"^cma,knem,xpmem", nullptr, true, false},
      {"tcp", "always", true, true},    {"sm", "never", true, false},     {"tcp", "auto", false, false},
      {nullptr, "always", false, true}, {"tcp", "never", false, false},   {nullptr, nullptr, false, rdma},
  };
  for (const Case& c : cases) {
    c.tls ? setenv("UCX_TLS", c.tls, 1) : unsetenv("UCX_TLS");
    c.setting ? setenv("DEEPCOMM_UCX_IN_PLACE", c.setting, 1) : unsetenv("DEEPCOMM_UCX_IN_PLACE");
    EXPECT_EQ(ucx_moves_in_place(c.same_host), c.in_place)
        << "UCX_TLS=" << (c.tls ? c.tls : "(unset)") << " DEEPCOMM_UCX_IN_PLACE=" << (c.setting ? c.setting : "(unset)")
        << (c.same_host ? ", one host" : ", two hosts");
  }
  setenv("DEEPCOMM_UCX_IN_PLACE", "sometimes", 1);
  EXPECT_THROW(ucx_moves_in_place(true), Error);
  unsetenv("UCX_TLS");
  unsetenv("DEEPCOMM_UCX_IN_PLACE");
}
#endif

}  // namespace
}  // namespace dc::test
