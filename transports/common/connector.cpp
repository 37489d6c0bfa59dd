#include "transports/common/connector.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "base/async_handshake.h"
#include "base/log.h"

namespace dc {

namespace {

constexpr auto kFirstRetry = std::chrono::milliseconds(10);
constexpr auto kMaxRetry = std::chrono::milliseconds(200);

void close_socket(Connector::Socket& socket) {
  boost::system::error_code ignored;
  socket.close(ignored);
}

bool same_token(const uint8_t* a, const PeerToken& b) { return std::memcmp(a, b.data(), b.size()) == 0; }

}  // namespace

struct Connector::Incoming {
  std::unique_ptr<Socket> socket;
  HandshakeSlots::Ticket ticket = 0;
  Hello hello;
};

struct Connector::DialState {
  explicit DialState(boost::asio::io_context& io) : deadline(io), retry(io) {}

  void finish(const Status& status) {
    if (finished) return;
    finished = true;
    deadline.cancel();
    retry.cancel();
    if (!status.ok() && socket) {
      close_socket(*socket);
      socket.reset();
    }
    done(status, std::move(socket));
  }

  int peer = 0;
  Protocol::endpoint endpoint;
  PeerToken peer_token{};
  Verify verify;
  Hello hello_out;
  Hello hello_in;
  std::unique_ptr<Socket> socket;
  boost::asio::steady_timer deadline;
  boost::asio::steady_timer retry;
  std::chrono::milliseconds backoff = kFirstRetry;
  std::string last_problem = "nobody listens yet";
  Done done;
  bool finished = false;
};

Connector::Connector(boost::asio::io_context& io, const Identity& identity)
    : io_(io), identity_(identity), acceptor_(io), unproven_(io) {}

void Connector::bind(const Protocol::endpoint& endpoint) {
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (ec) fail(dcSystemError, std::string(identity_.transport_name) + " transport: cannot bind: " + ec.message());
}

void Connector::start_listening() {
  if (listening_ || shut_down_) return;
  listening_ = true;
  boost::system::error_code ec;
  acceptor_.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) {
    DC_WARN("%s transport: cannot listen: %s", identity_.transport_name, ec.message().c_str());
    return;
  }
  accept_next();
}

Hello Connector::own_hello() const {
  Hello h;
  h.rank = identity_.rank;
  std::memcpy(h.token, identity_.token.data(), sizeof h.token);
  return h;
}

std::string Connector::describe(int peer) const {
  return std::string(identity_.transport_name) + " transport: rank " + std::to_string(identity_.rank) + " <-> rank " +
         std::to_string(peer);
}

void Connector::accept_next() {
  auto self = shared_from_this();
  acceptor_.async_accept([this, self](const boost::system::error_code& ec, Socket socket) {
    if (shut_down_ || ec == boost::asio::error::operation_aborted) return;
    if (!ec) authenticate(std::make_unique<Socket>(std::move(socket)));
    else DC_WARN("%s transport: accept failed: %s", identity_.transport_name, ec.message().c_str());
    accept_next();
  });
}

// Nothing but the handshake's fixed-size messages and then the fixed-size hello is read from a new
// connection, all within its slot's deadline.
void Connector::authenticate(std::unique_ptr<Socket> socket) {
  auto in = std::make_shared<Incoming>();
  in->socket = std::move(socket);
  in->ticket = unproven_.admit([in] { close_socket(*in->socket); });
  auto server = std::make_shared<handshake::Server>(identity_.secret, identity_.session,
                                                    std::vector<handshake::Purpose>{identity_.purpose});
  auto self = shared_from_this();
  async_serve_handshake(*in->socket, server, [this, self, in, server](bool proven) {
    if (!proven || shut_down_) {
      unproven_.release(in->ticket);
      return close_socket(*in->socket);
    }
    boost::asio::async_read(*in->socket, boost::asio::buffer(&in->hello, sizeof in->hello),
                            [this, self, in](const boost::system::error_code& ec, size_t) {
                              unproven_.release(in->ticket);
                              if (ec || shut_down_) return close_socket(*in->socket);
                              on_hello(in);
                            });
  });
}

void Connector::on_hello(const std::shared_ptr<Incoming>& in) {
  const Hello& hello = in->hello;
  const char* refused = nullptr;
  if (!hello_claims_a_dialer(hello, identity_.rank)) refused = "a hello claiming no rank that dials this one";
  else if (connected_.count(hello.rank)) refused = "a second claim of a rank that is already connected";
  else if (arrived_[hello.rank].size() >= kMaxClaimsPerRank) refused = "too many claims of one rank";
  if (refused) {
    DC_WARN("%s transport: rank %d refused %s (rank %d)", identity_.transport_name, identity_.rank, refused,
            hello.rank);
    return close_socket(*in->socket);
  }
  arrived_[hello.rank].push_back(Arrived{std::move(in->socket), hello});
  match(hello.rank);
}

// Pairs a waiting accept() with the claims of its peer, oldest first: a claim whose token or
// credentials do not match the peer's card is closed, and the real one still awaited.
void Connector::match(int peer) {
  auto w = waiting_.find(peer);
  auto& claims = arrived_[peer];
  while (w != waiting_.end() && !claims.empty()) {
    Arrived claim = std::move(claims.front());
    claims.erase(claims.begin());
    std::string problem;
    if (!same_token(claim.hello.token, w->second.token))
      problem = "its token is not the one in rank " + std::to_string(peer) + "'s card";
    else if (w->second.verify) problem = w->second.verify(*claim.socket);
    if (!problem.empty()) {
      DC_WARN("%s: refused a connection claiming rank %d: %s", describe(peer).c_str(), peer, problem.c_str());
      close_socket(*claim.socket);
      continue;
    }
    Waiting waiting = std::move(w->second);
    waiting_.erase(w);
    waiting.timer->cancel();
    connected_.insert(peer);
    return complete_accept(std::move(claim), std::move(waiting));
  }
}

void Connector::accept(int peer, const PeerToken& peer_token, Verify verify, int timeout_ms, Done done) {
  if (shut_down_ || waiting_.count(peer) || connected_.count(peer)) {
    const char* why = shut_down_ ? ": transport shut down" : ": already connected or connecting";
    boost::asio::post(io_, [done = std::move(done), what = describe(peer) + why] {
      done(Status::failure(dcInternalError, what), nullptr);
    });
    return;
  }
  start_listening();
  auto timer = std::make_shared<boost::asio::steady_timer>(io_);
  timer->expires_after(std::chrono::milliseconds(timeout_ms));
  auto self = shared_from_this();
  timer->async_wait([this, self, peer, timeout_ms](const boost::system::error_code& ec) {
    if (ec) return;
    auto it = waiting_.find(peer);
    if (it == waiting_.end()) return;
    Done expired = std::move(it->second.done);
    waiting_.erase(it);
    expired(Status::failure(dcRemoteError,
                            describe(peer) + ": the peer did not connect within " + std::to_string(timeout_ms) + " ms"),
            nullptr);
  });
  waiting_.emplace(peer, Waiting{peer_token, std::move(verify), timer, std::move(done)});
  match(peer);
}

void Connector::complete_accept(Arrived arrived, Waiting waiting) {
  auto reply = std::make_shared<Hello>(own_hello());
  auto socket = std::make_shared<std::unique_ptr<Socket>>(std::move(arrived.socket));
  auto self = shared_from_this();
  const int peer = arrived.hello.rank;
  boost::asio::async_write(
      **socket, boost::asio::buffer(reply.get(), sizeof *reply),
      [this, self, socket, reply, peer, done = std::move(waiting.done)](const boost::system::error_code& ec, size_t) {
        if (ec) {
          done(Status::failure(dcRemoteError,
                               describe(peer) + ": the peer went away during the handshake (" + ec.message() + ")"),
               nullptr);
          return;
        }
        done(Status::success(), std::move(*socket));
      });
}

void Connector::dial(int peer, const Protocol::endpoint& endpoint, const PeerToken& peer_token, Verify verify,
                     int timeout_ms, Done done) {
  auto state = std::make_shared<DialState>(io_);
  state->peer = peer;
  state->endpoint = endpoint;
  state->peer_token = peer_token;
  state->verify = std::move(verify);
  state->hello_out = own_hello();
  state->done = std::move(done);
  state->deadline.expires_after(std::chrono::milliseconds(timeout_ms));
  auto self = shared_from_this();
  state->deadline.async_wait([this, self, state, timeout_ms](const boost::system::error_code& ec) {
    if (ec) return;
    state->finish(Status::failure(dcRemoteError, describe(state->peer) + ": connecting timed out after " +
                                                     std::to_string(timeout_ms) + " ms (" + state->last_problem + ")"));
  });
  try_dial(state);
}

void Connector::retry_dial(const std::shared_ptr<DialState>& state) {
  if (state->socket) close_socket(*state->socket);
  state->retry.expires_after(state->backoff);
  state->backoff = std::min(state->backoff * 2, std::chrono::duration_cast<std::chrono::milliseconds>(kMaxRetry));
  auto self = shared_from_this();
  state->retry.async_wait([this, self, state](const boost::system::error_code& ec) {
    if (!ec) try_dial(state);
  });
}

void Connector::try_dial(const std::shared_ptr<DialState>& state) {
  if (state->finished) return;
  state->socket = std::make_unique<Socket>(io_);
  auto self = shared_from_this();
  state->socket->async_connect(state->endpoint, [this, self, state](const boost::system::error_code& ec) {
    if (state->finished) return;
    if (ec == boost::asio::error::connection_refused || ec == boost::asio::error::try_again) {
      state->last_problem = "the peer does not listen (" + ec.message() + ")";
      return retry_dial(state);  // not (yet) listening
    }
    if (ec)
      return state->finish(Status::failure(dcSystemError, describe(state->peer) + ": connect failed: " + ec.message()));
    auto client = std::make_shared<handshake::Client>(identity_.secret, identity_.purpose, identity_.session);
    async_client_handshake(*state->socket, client, [this, self, state, client](const ClientHandshakeResult& r) {
      if (state->finished) return;
      switch (r.kind) {
        case ClientHandshakeResult::Accepted: return on_dial_handshake(state);
        case ClientHandshakeResult::ClosedEarly:
          state->last_problem = "the peer dropped the connection during the handshake: " + r.why;
          return retry_dial(state);  // an overloaded listener evicts its oldest unproven connections
        case ClientHandshakeResult::Refused:
        case ClientHandshakeResult::Rejected:
          return state->finish(Status::failure(dcInvalidUsage, describe(state->peer) + ": the peer " + r.why));
      }
    });
  });
}

void Connector::on_dial_handshake(const std::shared_ptr<DialState>& state) {
  auto self = shared_from_this();
  boost::asio::async_write(
      *state->socket, boost::asio::buffer(&state->hello_out, sizeof state->hello_out),
      [this, self, state](const boost::system::error_code& write_ec, size_t) {
        if (state->finished) return;
        if (write_ec)
          return state->finish(
              Status::failure(dcRemoteError, describe(state->peer) + ": handshake failed: " + write_ec.message()));
        boost::asio::async_read(
            *state->socket, boost::asio::buffer(&state->hello_in, sizeof state->hello_in),
            [this, self, state](const boost::system::error_code& read_ec, size_t) {
              if (state->finished) return;
              const Hello& in = state->hello_in;
              if (read_ec)
                return state->finish(Status::failure(
                    dcRemoteError, describe(state->peer) +
                                       ": the peer closed the connection after the handshake: " + read_ec.message()));
              std::string problem;
              if (in.magic != Hello::kMagic || in.rank != state->peer || !same_token(in.token, state->peer_token))
                problem = "the peer's hello does not match its card";
              else if (state->verify) problem = state->verify(*state->socket);
              if (!problem.empty())
                return state->finish(Status::failure(dcRemoteError, describe(state->peer) + ": " + problem));
              state->finish(Status::success());
            });
      });
}

void Connector::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  unproven_.clear();
  arrived_.clear();
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& [peer, w] : waiting) {
    w.timer->cancel();
    w.done(Status::failure(dcInternalError, describe(peer) + ": transport shut down"), nullptr);
  }
}

}  // namespace dc
