// The transport scenarios over UCX, on two processes (UCX has one worker per process), over UCX's
// TCP transport between ranks of different host identities (endpoints in peer-failure mode) and
// over its shared memory on one host (no peer-failure mode there: the control socket reports
// death). Skipped, saying why, where UCX is absent or cannot start.
#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <cstdlib>
#include <ostream>

#include "tests/support/transport_probe.h"
#include "tests/transports/scenarios.h"
#include "tests/transports/two_ranks.h"
#include "transports/common/eager_credit.h"
#include "transports/transport.h"

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

}  // namespace
}  // namespace dc::test
