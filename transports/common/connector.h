// Connection set-up shared by the stream transports. Each Transport binds one endpoint at once and
// listens on it only when a peer needs to dial it (its first accept()). For a pair of ranks the
// lower one dials, the higher one accepts. Every connection first runs the handshake (handshake.h)
// that proves both sides hold the unique id's secret; then the dialer sends its Hello {rank, token}
// and the acceptor answers with its own. Proven hellos wait (keyed by the dialer's rank) until the
// local accept() claims them, so hello and accept() may come in either order.
//
// Strangers are bounded: a listener holds at most handshake::kMaxPending unproven connections, each
// for at most handshake::kDeadline (the oldest is evicted for a new one), and reads nothing from
// them but the handshake's fixed-size messages. A claim is bound to the card: its token must be the
// one in the claimed rank's address, and `Verify` (the shm transport: SO_PEERCRED) must accept it;
// a claim that fails is closed and the real one still awaited. Once a rank is connected, later
// claims of it are refused. A dialer whose connection is dropped before the acceptor's verdict
// (an overloaded listener) dials again until its deadline.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/error.h"
#include "base/handshake.h"
#include "base/handshake_slots.h"
#include "transports/common/frame.h"
#include "transports/common/peer_token.h"

namespace dc {

class Connector : public std::enable_shared_from_this<Connector> {
 public:
  using Protocol = boost::asio::generic::stream_protocol;
  using Socket = Protocol::socket;
  // The handshake's outcome: on success the connected socket.
  using Done = std::function<void(const Status&, std::unique_ptr<Socket>)>;
  // Checks a proven connection against the peer's card beyond its token: "" accepts, else why not.
  using Verify = std::function<std::string(Socket&)>;

  // Who this side is: its rank, the communicator's session and secret, its transport's token.
  struct Identity {
    int rank = 0;
    uint64_t session = 0;
    Secret secret;
    PeerToken token{};
    handshake::Purpose purpose = handshake::Purpose::TcpPeer;
    const char* transport_name = "";
  };

  Connector(boost::asio::io_context& io, const Identity& identity);

  // Binds the endpoint (throws dc::Error); listening starts with the first accept().
  void bind(const Protocol::endpoint& endpoint);
  Protocol::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

  // Lower rank: dials `peer` at `endpoint` (retrying until the deadline while it refuses or drops
  // the connection before its verdict).
  void dial(int peer, const Protocol::endpoint& endpoint, const PeerToken& peer_token, Verify verify, int timeout_ms,
            Done done);
  // Higher rank: waits for `peer`'s proven hello with `peer_token` that `verify` accepts.
  void accept(int peer, const PeerToken& peer_token, Verify verify, int timeout_ms, Done done);
  // Stops listening, drops unclaimed and unproven connections and fails waiting accepts.
  void shutdown();

  // Connections still proving the secret (bounded by handshake::kMaxPending).
  size_t unproven() const { return unproven_.size(); }

  // Proven claims of one rank that may wait for accept() at a time; more are closed.
  static constexpr size_t kMaxClaimsPerRank = 4;

 private:
  struct Incoming;
  struct Arrived {
    std::unique_ptr<Socket> socket;
    Hello hello;
  };
  struct Waiting {
    PeerToken token;
    Verify verify;
    std::shared_ptr<boost::asio::steady_timer> timer;
    Done done;
  };
  struct DialState;

  void start_listening();
  void accept_next();
  void authenticate(std::unique_ptr<Socket> socket);
  void on_hello(const std::shared_ptr<Incoming>& in);
  void match(int peer);
  void complete_accept(Arrived arrived, Waiting waiting);
  void try_dial(const std::shared_ptr<DialState>& state);
  void on_dial_handshake(const std::shared_ptr<DialState>& state);
  void retry_dial(const std::shared_ptr<DialState>& state);
  Hello own_hello() const;
  std::string describe(int peer) const;

  boost::asio::io_context& io_;
  Identity identity_;
  boost::asio::basic_socket_acceptor<Protocol> acceptor_;
  HandshakeSlots unproven_;
  bool listening_ = false;
  bool shut_down_ = false;
  std::map<int, std::vector<Arrived>> arrived_;
  std::map<int, Waiting> waiting_;
  std::set<int> connected_;  // ranks whose connection was handed out
};

}  // namespace dc
