// The transports' listeners (TCP, and the shared-memory transport's Unix socket) against a hostile
// neighbour: 1000 strangers without the secret are bounded in number, time, memory and
// descriptors; proven connections that claim a rank with another token, from another process (shm:
// SO_PEERCRED), or a second time, are refused without disturbing the real peer; and the real
// connection then carries data.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>

#include <cstring>
#include <memory>
#include <vector>

#include "base/random_bytes.h"
#include "tests/security/strangers.h"
#include "tests/transports/two_ranks.h"
#include "transports/common/frame.h"
#include "transports/common/peer_token.h"

namespace dc::test {
namespace {

constexpr int kStrangers = 1000;
constexpr int kHeldAtOnce = 200;
constexpr size_t kMaxGrowth = 16u << 20;
constexpr int kConnectMs = 60000;

struct Listener {
  const char* name;
  TransportFactory factory;
  handshake::Purpose purpose;
  // Where a transport with this address listens, and the token in it.
  Target (*target_of)(const std::string& address);
  PeerToken (*token_of)(const std::string& address);
};

Target tcp_target(const std::string& address) {
  const auto colon = address.rfind(':'), slash = address.rfind('/');
  return Target::tcp(address.substr(0, colon),
                     static_cast<uint16_t>(std::stoi(address.substr(colon + 1, slash - colon - 1))));
}
PeerToken tcp_token(const std::string& address) {
  PeerToken t{};
  token_from_hex(address.substr(address.rfind('/') + 1), &t);
  return t;
}
Target shm_target(const std::string& address) { return Target::abstract_unix("deepcomm-" + address.substr(0, 32)); }
PeerToken shm_token(const std::string& address) {
  PeerToken t{};
  token_from_hex(address.substr(0, 32), &t);
  return t;
}

const Listener kTcp{"tcp", [](const TransportOptions& o) { return make_tcp_transport(o); }, handshake::Purpose::TcpPeer,
                    tcp_target, tcp_token};
const Listener kShm{"shm", [](const TransportOptions& o) { return make_shm_transport(o); }, handshake::Purpose::ShmPeer,
                    shm_target, shm_token};

using Connected = std::pair<Status, std::shared_ptr<Connection>>;

std::shared_future<Connected> start_connect(RankIo& io, Transport& t, int peer, const std::string& address) {
  auto promise = std::make_shared<std::promise<Connected>>();
  std::shared_future<Connected> future = promise->get_future().share();
  io.call([&] {
    t.connect(peer, address, kConnectMs, [promise](const Status& s, std::shared_ptr<Connection> c) {
      promise->set_value({s, std::move(c)});
    });
  });
  return future;
}

// A proven connection that sends a hello claiming `rank` with `token`: true if the listener closed it.
bool claim_refused(const Target& target, const TransportOptions& o, handshake::Purpose purpose, int rank,
                   const PeerToken& token) {
  const int fd = prove(target, o.secret, o.session, purpose);
  if (fd < 0) return false;
  Hello hello;
  hello.rank = rank;
  std::memcpy(hello.token, token.data(), sizeof hello.token);
  const bool sent = ::send(fd, &hello, sizeof hello, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof hello);
  const bool refused = sent && closed_by_peer(fd, 2000);
  ::close(fd);
  return refused;
}

class ListenerStrangers : public ::testing::TestWithParam<Listener> {};

TEST_P(ListenerStrangers, StrangersAreBoundedAndTheRealPeerConnects) {
  const Listener& l = GetParam();
  RankIo io;
  const uint64_t session = random_session();
  const TransportOptions o0 = options_for(io.io(), 0, session), o1 = options_for(io.io(), 1, session);
  std::unique_ptr<Transport> dialer, acceptor;
  io.call([&] {
    dialer = l.factory(o0);
    acceptor = l.factory(o1);
  });
  // Rank 1 starts listening for rank 0.
  auto accepted = start_connect(io, *acceptor, 0, dialer->address());
  const Target target = l.target_of(acceptor->address());

  const size_t resident_before = resident_bytes();
  const int fds_before = open_fds();
  size_t peak = resident_before;
  const Stranger kinds[] = {Stranger::Idle, Stranger::RandomBytes, Stranger::OversizedClaim, Stranger::WrongSecret,
                            Stranger::ForgedProof};
  for (int played = 0; played < kStrangers; played += kHeldAtOnce) {
    std::vector<int> held;
    for (int i = 0; i < kHeldAtOnce; ++i) {
      const int fd = play(target, kinds[(played + i) % 5], session, l.purpose);
      ASSERT_GE(fd, 0) << "stranger " << played + i;
      held.push_back(fd);
    }
    peak = std::max(peak, resident_bytes());
    const int cap = static_cast<int>(handshake::kMaxPending);
    EXPECT_LE(wait_until_open_at_most(held, cap, 3000), cap) << "batch at " << played;
    for (int fd : held) close(fd);
  }

  // Proven, but with another process's token: refused, and rank 1 keeps waiting for the real one.
  PeerToken other;
  random_bytes(other.data(), other.size());
  EXPECT_TRUE(claim_refused(target, o1, l.purpose, 0, other));
  if (l.purpose == handshake::Purpose::ShmPeer) {
    // The right token from another process: SO_PEERCRED shows it is not the pid in rank 0's card.
    const pid_t child = fork();
    if (child == 0) _exit(claim_refused(target, o1, l.purpose, 0, l.token_of(dialer->address())) ? 0 : 1);
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a forked impostor was not refused";
  }

  auto dialed = start_connect(io, *dialer, 1, acceptor->address());
  ASSERT_EQ(dialed.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  ASSERT_EQ(accepted.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  ASSERT_TRUE(dialed.get().first.ok()) << dialed.get().first.message;
  ASSERT_TRUE(accepted.get().first.ok()) << accepted.get().first.message;

  // Once rank 0 is connected, even its own token cannot claim it again.
  EXPECT_TRUE(claim_refused(target, o1, l.purpose, 0, l.token_of(dialer->address())));

  // The real connection carries data both ways.
  RankContext a, b;
  a.io = b.io = &io;
  a.conn = dialed.get().second;
  b.conn = accepted.get().second;
  std::vector<char> out(1 << 20), in(1 << 20);
  fill_pattern(out.data(), out.size(), 7);
  PendingOp r = b.recv(Tag{1, 2, 3}, in.data(), in.size());
  PendingOp s = a.send(Tag{1, 2, 3}, out.data(), out.size());
  EXPECT_TRUE(s.wait().status.ok());
  OpResult got = r.wait();
  EXPECT_TRUE(got.status.ok()) << got.status.message;
  EXPECT_EQ(check_pattern(in.data(), in.size(), 7), "");

  std::printf("%d strangers: resident memory %zu KiB -> peak %zu KiB (+%zu KiB); descriptors %d before\n", kStrangers,
              resident_before >> 10, peak >> 10, (peak - resident_before) >> 10, fds_before);
  EXPECT_LT(peak - resident_before, kMaxGrowth) << "resident memory grew from " << resident_before << " to " << peak;
  io.call([&] {
    a.conn.reset();
    b.conn.reset();
  });
  EXPECT_LE(open_fds(), fds_before + 4) << "descriptors before " << fds_before;
  io.call([&] {
    dialer.reset();
    acceptor.reset();
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, ListenerStrangers, ::testing::Values(kTcp, kShm),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace dc::test
