#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>

#include "tests/transports/scenarios.h"
#include "tests/transports/two_ranks.h"
#include "transports/transport.h"

namespace dc::test {
namespace {

TransportFactory tcp() {
  return [](const TransportOptions& o) { return make_tcp_transport(o); };
}

class TcpTwoRanks : public ::testing::TestWithParam<RankMode> {};

TEST_P(TcpTwoRanks, SizesBothWays) { EXPECT_EQ("", run_two_ranks(GetParam(), tcp(), sizes_both_ways)); }
TEST_P(TcpTwoRanks, PiecesInOrder) { EXPECT_EQ("", run_two_ranks(GetParam(), tcp(), pieces_in_order)); }
TEST_P(TcpTwoRanks, TagsMatchedNotOrder) { EXPECT_EQ("", run_two_ranks(GetParam(), tcp(), reverse_tags)); }
TEST_P(TcpTwoRanks, UnexpectedMessages) { EXPECT_EQ("", run_two_ranks(GetParam(), tcp(), unexpected_messages)); }
TEST_P(TcpTwoRanks, CancelledReceives) { EXPECT_EQ("", run_two_ranks(GetParam(), tcp(), cancelled_receives)); }
TEST_P(TcpTwoRanks, LateMessagesOfACancelledOperation) {
  EXPECT_EQ("", run_two_ranks(GetParam(), tcp(), late_messages_of_cancelled));
}
TEST_P(TcpTwoRanks, SentThenClosed) {
  EXPECT_EQ("", run_two_ranks(GetParam(), tcp(), sent_then_closed, RunOptions{false, true}));
}
TEST_P(TcpTwoRanks, ShortAndTooLong) { EXPECT_EQ("", run_two_ranks(GetParam(), tcp(), short_and_too_long)); }

INSTANTIATE_TEST_SUITE_P(Ranks, TcpTwoRanks, ::testing::Values(RankMode::Threads, RankMode::Processes),
                         [](const auto& info) { return std::string(mode_name(info.param)); });

TEST(TcpTransport, PeerKilledMidTransfer) {
  EXPECT_EQ("", run_two_ranks(RankMode::Processes, tcp(), peer_killed, RunOptions{true}));
}

TEST(TcpTransport, ConnectDeadlines) {
  // A port that was just free: nobody listens there.
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor probe(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  const unsigned short port = probe.local_endpoint().port();
  probe.close();
  EXPECT_EQ("", connect_deadlines(tcp(), "127.0.0.1:" + std::to_string(port) + "/" + std::string(32, 'a')));
}

TEST(TcpTransport, WrongSessionIsRefused) { EXPECT_EQ("", wrong_session(tcp())); }

TEST(TcpTransport, MalformedAddressFails) { EXPECT_EQ("", connect_deadlines(tcp(), "not-an-address")); }

TEST(TcpTransport, AddressIsIpPortAndToken) {
  RankIo io;
  std::unique_ptr<Transport> t;
  io.call([&] { t = make_tcp_transport(TransportOptions{&io.io(), 0, 1, "h"}); });
  const std::string full = t->address();
  const auto slash = full.rfind('/');
  ASSERT_NE(slash, std::string::npos);
  EXPECT_EQ(full.size() - slash - 1, 32u) << full;
  const std::string a = full.substr(0, slash);
  const auto colon = a.rfind(':');
  ASSERT_NE(colon, std::string::npos);
  boost::system::error_code ec;
  boost::asio::ip::make_address(a.substr(0, colon), ec);
  EXPECT_FALSE(ec) << a;
  EXPECT_GT(std::stoi(a.substr(colon + 1)), 0);
  EXPECT_STREQ(t->name(), "tcp");
  io.call([&] { t.reset(); });
}

}  // namespace
}  // namespace dc::test
