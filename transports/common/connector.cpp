#include "transports/common/connector.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "src/base/log.h"

namespace dc {

namespace {

constexpr auto kFirstRetry = std::chrono::milliseconds(10);
constexpr auto kMaxRetry = std::chrono::milliseconds(200);

}  // namespace

struct Connector::DialState {
  DialState(boost::asio::io_context& io) : deadline(io), retry(io) {}

  void finish(const Status& status) {
    if (finished) return;
    finished = true;
    deadline.cancel();
    retry.cancel();
    if (!status.ok()) {
      if (socket) {
        boost::system::error_code ignored;
        socket->close(ignored);
      }
      socket.reset();
    }
    done(status, std::move(socket), hello_in);
  }

  int peer = 0;
  Protocol::endpoint endpoint;
  Hello hello_out;
  Hello hello_in;
  std::unique_ptr<Socket> socket;
  boost::asio::steady_timer deadline;
  boost::asio::steady_timer retry;
  std::chrono::milliseconds backoff = kFirstRetry;
  Done done;
  bool finished = false;
};

Connector::Connector(boost::asio::io_context& io, int rank, uint64_t session,
                     const char* transport_name)
    : io_(io), rank_(rank), session_(session), transport_name_(transport_name), acceptor_(io) {}

void Connector::listen(const Protocol::endpoint& endpoint) {
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) fail(dcSystemError, std::string(transport_name_) + " transport: cannot listen: " + ec.message());
  accept_next();
}

Hello Connector::own_hello() const {
  Hello h;
  h.session = session_;
  h.rank = rank_;
  h.pid = static_cast<int32_t>(getpid());
  return h;
}

std::string Connector::describe(int peer) const {
  return std::string(transport_name_) + " transport: rank " + std::to_string(rank_) + " <-> rank " +
         std::to_string(peer);
}

void Connector::accept_next() {
  auto self = shared_from_this();
  acceptor_.async_accept([this, self](const boost::system::error_code& ec, Socket socket) {
    if (shut_down_) return;
    if (!ec) {
      read_hello(std::make_unique<Socket>(std::move(socket)));
    } else if (ec == boost::asio::error::operation_aborted) {
      return;
    } else {
      DC_WARN("%s transport: accept failed: %s", transport_name_, ec.message().c_str());
    }
    accept_next();
  });
}

void Connector::read_hello(std::unique_ptr<Socket> socket) {
  struct Incoming {
    std::unique_ptr<Socket> socket;
    Hello hello;
  };
  auto in = std::make_shared<Incoming>(Incoming{std::move(socket), {}});
  auto self = shared_from_this();
  boost::asio::async_read(*in->socket, boost::asio::buffer(&in->hello, sizeof in->hello),
                          [this, self, in](const boost::system::error_code& ec, size_t) {
                            if (ec || shut_down_) return;  // dropping the socket closes it
                            on_hello(std::move(in->socket), in->hello);
                          });
}

void Connector::on_hello(std::unique_ptr<Socket> socket, const Hello& hello) {
  if (hello.magic != Hello::kMagic || hello.session != session_ || hello.rank < 0 ||
      hello.rank >= rank_) {
    DC_INFO("%s transport: dropping a connection with a foreign hello (rank %d)", transport_name_,
            hello.rank);
    return;
  }
  auto& waiting = waiting_[hello.rank];
  if (waiting.empty()) {
    arrived_[hello.rank].push_back(Arrived{std::move(socket), hello});
    return;
  }
  Waiting w = std::move(waiting.front());
  waiting.pop_front();
  w.timer->cancel();
  complete_accept(Arrived{std::move(socket), hello}, std::move(w));
}

void Connector::accept(int peer, int timeout_ms, Prepare prepare, Done done) {
  if (shut_down_) {
    boost::asio::post(io_, [done = std::move(done), what = describe(peer)] {
      done(Status::failure(dcInternalError, what + ": transport shut down"), nullptr, {});
    });
    return;
  }
  auto& arrived = arrived_[peer];
  if (!arrived.empty()) {
    Arrived a = std::move(arrived.front());
    arrived.pop_front();
    return complete_accept(std::move(a), Waiting{0, nullptr, std::move(prepare), std::move(done)});
  }
  auto timer = std::make_shared<boost::asio::steady_timer>(io_);
  const uint64_t id = next_waiting_id_++;
  waiting_[peer].push_back(Waiting{id, timer, std::move(prepare), std::move(done)});
  timer->expires_after(std::chrono::milliseconds(timeout_ms));
  auto self = shared_from_this();
  timer->async_wait([this, self, peer, id, timeout_ms](const boost::system::error_code& ec) {
    if (ec) return;
    auto& list = waiting_[peer];
    auto it = std::find_if(list.begin(), list.end(), [id](const Waiting& w) { return w.id == id; });
    if (it == list.end()) return;
    Done expired = std::move(it->done);
    list.erase(it);
    expired(Status::failure(dcRemoteError, describe(peer) + ": the peer did not connect within " +
                                               std::to_string(timeout_ms) + " ms"),
            nullptr, {});
  });
}

void Connector::complete_accept(Arrived arrived, Waiting waiting) {
  auto reply = std::make_shared<Hello>(own_hello());
  Status prepared = waiting.prepare ? waiting.prepare(arrived.hello, *reply) : Status::success();
  if (!prepared.ok()) {
    boost::asio::post(io_, [done = std::move(waiting.done), prepared] {
      done(prepared, nullptr, {});
    });
    return;
  }
  auto socket = std::make_shared<std::unique_ptr<Socket>>(std::move(arrived.socket));
  auto self = shared_from_this();
  boost::asio::async_write(
      **socket, boost::asio::buffer(reply.get(), sizeof *reply),
      [this, self, socket, reply, hello = arrived.hello, done = std::move(waiting.done)](
          const boost::system::error_code& ec, size_t) {
        if (ec) {
          done(Status::failure(dcRemoteError, describe(hello.rank) +
                                                  ": the peer went away during the handshake (" +
                                                  ec.message() + ")"),
               nullptr, {});
          return;
        }
        done(Status::success(), std::move(*socket), hello);
      });
}

void Connector::dial(int peer, const Protocol::endpoint& endpoint, const Hello& hello,
                     int timeout_ms, Done done) {
  auto state = std::make_shared<DialState>(io_);
  state->peer = peer;
  state->endpoint = endpoint;
  state->hello_out = hello;
  state->done = std::move(done);
  state->deadline.expires_after(std::chrono::milliseconds(timeout_ms));
  auto self = shared_from_this();
  state->deadline.async_wait([this, self, state, timeout_ms](const boost::system::error_code& ec) {
    if (ec) return;
    state->finish(Status::failure(dcRemoteError, describe(state->peer) +
                                                     ": connecting timed out after " +
                                                     std::to_string(timeout_ms) + " ms"));
  });
  try_dial(state);
}

void Connector::try_dial(const std::shared_ptr<DialState>& state) {
  if (state->finished) return;
  state->socket = std::make_unique<Socket>(io_);
  auto self = shared_from_this();
  state->socket->async_connect(state->endpoint, [this, self, state](
                                                    const boost::system::error_code& ec) {
    if (state->finished) return;
    if (ec == boost::asio::error::connection_refused || ec == boost::asio::error::try_again) {
      // Not (yet) listening: retry with backoff until the deadline.
      state->retry.expires_after(state->backoff);
      state->backoff = std::min(state->backoff * 2, std::chrono::duration_cast<std::chrono::milliseconds>(kMaxRetry));
      state->retry.async_wait([this, self, state](const boost::system::error_code& wait_ec) {
        if (!wait_ec) try_dial(state);
      });
      return;
    }
    if (ec) {
      return state->finish(
          Status::failure(dcSystemError, describe(state->peer) + ": connect failed: " + ec.message()));
    }
    boost::asio::async_write(
        *state->socket, boost::asio::buffer(&state->hello_out, sizeof state->hello_out),
        [this, self, state](const boost::system::error_code& write_ec, size_t) {
          if (state->finished) return;
          if (write_ec) {
            return state->finish(Status::failure(
                dcRemoteError, describe(state->peer) + ": handshake failed: " + write_ec.message()));
          }
          boost::asio::async_read(
              *state->socket, boost::asio::buffer(&state->hello_in, sizeof state->hello_in),
              [this, self, state](const boost::system::error_code& read_ec, size_t) {
                if (state->finished) return;
                const Hello& in = state->hello_in;
                if (read_ec) {
                  return state->finish(Status::failure(
                      dcRemoteError, describe(state->peer) +
                                         ": the peer closed the connection during the handshake "
                                         "(another session?): " +
                                         read_ec.message()));
                }
                if (in.magic != Hello::kMagic || in.session != session_ || in.rank != state->peer) {
                  return state->finish(Status::failure(
                      dcRemoteError, describe(state->peer) + ": the peer answered a foreign hello"));
                }
                state->finish(Status::success());
              });
        });
  });
}

void Connector::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  arrived_.clear();
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& [peer, list] : waiting) {
    for (auto& w : list) {
      w.timer->cancel();
      w.done(Status::failure(dcInternalError, describe(peer) + ": transport shut down"), nullptr, {});
    }
  }
}

}  // namespace dc
