// Connection set-up shared by the stream transports. Each Transport listens on one endpoint; for a
// pair of ranks the lower one dials and sends a Hello {session, rank, pid, extra}, the higher one
// accepts. Accepted hellos wait (keyed by the dialer's rank) until the local connect() claims them,
// so hello and connect() may come in either order; the acceptor then replies with its own Hello.
// Hellos from another session are dropped. Both sides enforce a deadline with a steady_timer.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <boost/asio/basic_socket_acceptor.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "src/base/error.h"
#include "transports/common/frame.h"

namespace dc {

class Connector : public std::enable_shared_from_this<Connector> {
 public:
  using Protocol = boost::asio::generic::stream_protocol;
  using Socket = Protocol::socket;
  // The handshake's outcome: on success the connected socket and the peer's hello.
  using Done = std::function<void(const Status&, std::unique_ptr<Socket>, const Hello& peer)>;
  // Acceptor side, when a hello is claimed, before replying: may fill the reply's extra, or refuse.
  using Prepare = std::function<Status(const Hello& peer, Hello& reply)>;

  Connector(boost::asio::io_context& io, int rank, uint64_t session, const char* transport_name);

  // Binds and listens (throws dc::Error); then accepts until shutdown().
  void listen(const Protocol::endpoint& endpoint);
  Protocol::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

  // Lower rank: dials `endpoint` (retrying refused connections until the deadline).
  void dial(int peer, const Protocol::endpoint& endpoint, const Hello& hello, int timeout_ms,
            Done done);
  // Higher rank: waits for `peer`'s hello.
  void accept(int peer, int timeout_ms, Prepare prepare, Done done);
  // Stops listening, drops unclaimed hellos and fails waiting accepts.
  void shutdown();

  Hello own_hello() const;

 private:
  struct Arrived {
    std::unique_ptr<Socket> socket;
    Hello hello;
  };
  struct Waiting {
    uint64_t id;
    std::shared_ptr<boost::asio::steady_timer> timer;
    Prepare prepare;
    Done done;
  };
  struct DialState;

  void accept_next();
  void read_hello(std::unique_ptr<Socket> socket);
  void on_hello(std::unique_ptr<Socket> socket, const Hello& hello);
  void complete_accept(Arrived arrived, Waiting waiting);
  void try_dial(const std::shared_ptr<DialState>& state);
  std::string describe(int peer) const;

  boost::asio::io_context& io_;
  int rank_;
  uint64_t session_;
  const char* transport_name_;
  boost::asio::basic_socket_acceptor<Protocol> acceptor_;
  bool shut_down_ = false;
  std::map<int, std::deque<Arrived>> arrived_;
  std::map<int, std::deque<Waiting>> waiting_;
  uint64_t next_waiting_id_ = 1;
};

}  // namespace dc
