// The handshake (handshake.h) driven over any Boost.Asio stream socket, for the rendezvous root and
// the transports' listeners and dialers. Neither side has a deadline of its own: the server's
// HandshakeSlots and the client's caller close the socket when time is up, which ends the
// operation in progress with an error.
#pragma once

#include <boost/asio/error.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <functional>
#include <memory>
#include <string>

#include "base/handshake.h"

namespace dc {

// Serves one client: done(true) once it proved the secret (the socket is then the protocol's),
// done(false) otherwise (close it). `socket` must live until done runs (capture its owner in done).
template <class Socket>
void async_serve_handshake(Socket& socket, std::shared_ptr<handshake::Server> server,
                           std::function<void(bool accepted)> done) {
  struct State {
    handshake::Challenge challenge;
    handshake::Response response;
    handshake::Proof proof;
    handshake::Verdict verdict;
    std::shared_ptr<handshake::Server> server;
    std::function<void(bool)> done;
  };
  auto s = std::make_shared<State>();
  s->server = std::move(server);
  s->done = std::move(done);
  namespace asio = boost::asio;
  using boost::system::error_code;
  asio::async_read(socket, asio::buffer(s->challenge), [&socket, s](const error_code& ec, size_t) {
    if (ec) return s->done(false);
    const auto step = s->server->on_challenge(s->challenge, &s->response);
    if (step == handshake::Server::Step::Drop) return s->done(false);
    asio::async_write(socket, asio::buffer(s->response), [&socket, s, step](const error_code& ec, size_t) {
      if (ec || step == handshake::Server::Step::Refuse) return s->done(false);
      asio::async_read(socket, asio::buffer(s->proof), [&socket, s](const error_code& ec, size_t) {
        if (ec) return s->done(false);
        const bool accepted = s->server->on_proof(s->proof, &s->verdict);
        asio::async_write(socket, asio::buffer(s->verdict),
                          [s, accepted](const error_code& ec, size_t) { s->done(accepted && !ec); });
      });
    });
  });
}

struct ClientHandshakeResult {
  enum Kind {
    Accepted,     // the server proved the secret and accepted ours
    ClosedEarly,  // the connection ended before the verdict: an overloaded listener (retry)
    Refused,      // the server turned us away or did not prove the secret (why says which)
    Rejected,     // the server rejected our proof: we hold another secret
  } kind;
  std::string why;
};

// The client side: done(result) when it ended. `socket` must live until done runs.
template <class Socket>
void async_client_handshake(Socket& socket, std::shared_ptr<handshake::Client> client,
                            std::function<void(const ClientHandshakeResult&)> done) {
  struct State {
    handshake::Response response;
    handshake::Proof proof;
    handshake::Verdict verdict;
    std::shared_ptr<handshake::Client> client;
    std::function<void(const ClientHandshakeResult&)> done;
  };
  auto s = std::make_shared<State>();
  s->client = std::move(client);
  s->done = std::move(done);
  namespace asio = boost::asio;
  using boost::system::error_code;
  using R = ClientHandshakeResult;
  auto closed = [](const error_code& ec) { return R{R::ClosedEarly, ec.message()}; };
  asio::async_write(socket, asio::buffer(s->client->challenge()), [&socket, s, closed](const error_code& ec, size_t) {
    if (ec) return s->done(closed(ec));
    asio::async_read(socket, asio::buffer(s->response), [&socket, s, closed](const error_code& ec, size_t) {
      if (ec) return s->done(closed(ec));
      const auto step = s->client->on_response(s->response, &s->proof);
      if (step != handshake::Client::Step::Continue) return s->done(R{R::Refused, handshake::describe(step)});
      asio::async_write(socket, asio::buffer(s->proof), [&socket, s, closed](const error_code& ec, size_t) {
        if (ec) return s->done(closed(ec));
        asio::async_read(socket, asio::buffer(s->verdict), [s, closed](const error_code& ec, size_t) {
          if (ec) return s->done(closed(ec));
          if (!s->client->on_verdict(s->verdict))
            return s->done(R{R::Rejected,
                             "it rejected our proof: this rank holds a different secret "
                             "(another unique id, or another DEEPCOMM_SECRET)"});
          s->done(R{R::Accepted, ""});
        });
      });
    });
  });
}

}  // namespace dc
