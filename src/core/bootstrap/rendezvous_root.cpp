#include "src/core/bootstrap/rendezvous_root.h"

#include <fcntl.h>

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <sstream>

#include "base/async_handshake.h"
#include "base/error.h"
#include "base/fork_park.h"
#include "base/log.h"

namespace dc {

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {
// Launched programs must not inherit the root's sockets: a child holding the listening socket
// would keep the port open after the root closed it.
void set_close_on_exec(int fd) { fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC); }

// After the deadline, how long the root still tries to deliver its error messages.
constexpr std::chrono::seconds kFarewellGrace{1};
}  // namespace

struct RendezvousRoot::Connection {
  explicit Connection(asio::io_context& io) : socket(io) {}
  void close() {
    error_code ignored;
    socket.close(ignored);
  }
  tcp::socket socket;
  handshake::Purpose purpose{};
  std::array<uint8_t, wire::kRequestBytes> header{};
  wire::Request request;
  std::string blob;
};

RendezvousRoot::RendezvousRoot(const tcp::endpoint& bind_to, bool reuse_address, const IdCredentials& credentials,
                               std::chrono::milliseconds deadline, bool fail_on_departure)
    : acceptor_(io_),
      deadline_timer_(io_),
      deadline_(deadline),
      fail_on_departure_(fail_on_departure),
      credentials_(credentials),
      unproven_(io_),
      state_(credentials.session) {
  error_code ec;
  acceptor_.open(bind_to.protocol(), ec);
  if (!ec) set_close_on_exec(acceptor_.native_handle());
  if (!ec && reuse_address) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(bind_to, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) endpoint_ = acceptor_.local_endpoint(ec);
  if (ec) {
    std::ostringstream where;
    where << bind_to;
    fail(dcSystemError, "bootstrap root cannot listen on " + where.str() + ": " + ec.message());
  }
  listen_fd_ = acceptor_.native_handle();
}

RendezvousRoot::~RendezvousRoot() {
  io_.stop();
  {
    std::lock_guard<std::mutex> lock(exit_mutex_);
    may_exit_ = true;
  }
  exit_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void RendezvousRoot::start() {
  accept_next();
  deadline_timer_.expires_after(deadline_);
  deadline_timer_.async_wait([this](error_code ec) {
    if (!ec) on_deadline();
  });
  // The process hosting a root usually forks its ranks next: the thread is parked across forks.
  // Done serving, it waits (holding nothing) to be joined instead of exiting by itself: a thread's
  // exit frees memory after it can no longer be parked, so it happens inside the join, on the
  // thread that may fork next.
  thread_ = ForkParkedRunner::start(io_, [this] {
    try {
      io_.run();
    } catch (const std::exception& e) {
      DC_WARN("bootstrap root stopped: %s", e.what());
    }
    finished_ = true;
    std::unique_lock<std::mutex> lock(exit_mutex_);
    exit_cv_.wait(lock, [this] { return may_exit_; });
  });
}

void RendezvousRoot::accept_next() {
  auto c = std::make_shared<Connection>(io_);
  acceptor_.async_accept(c->socket, [this, c](error_code ec) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec && ec != asio::error::connection_aborted) {
      DC_WARN("bootstrap root stops accepting: %s", ec.message().c_str());
      return;
    }
    if (!ec) {
      set_close_on_exec(c->socket.native_handle());
      authenticate(c);
    }
    accept_next();
  });
}

// Nothing is read from a connection, and nothing allocated for it, before it proved the secret.
void RendezvousRoot::authenticate(const ConnectionPtr& c) {
  const auto ticket = unproven_.admit([c] { c->close(); });
  auto server = std::make_shared<handshake::Server>(
      credentials_.secret, credentials_.session,
      std::vector<handshake::Purpose>{handshake::Purpose::RootJoin, handshake::Purpose::RootStatus});
  async_serve_handshake(c->socket, server, [this, c, server, ticket](bool proven) {
    unproven_.release(ticket);
    if (!proven || closing_) return c->close();
    c->purpose = server->purpose();
    read_request(c);
  });
}

void RendezvousRoot::read_request(const ConnectionPtr& c) {
  asio::async_read(c->socket, asio::buffer(c->header), [this, c](error_code ec, size_t) {
    if (ec || !wire::decode_request(c->header.data(), &c->request)) return c->close();
    const bool as_proven =
        c->request.kind ==
        (c->purpose == handshake::Purpose::RootJoin ? wire::RequestKind::Join : wire::RequestKind::StatusQuery);
    if (!as_proven || c->request.session != credentials_.session) return c->close();
    on_request(c);
  });
}

void RendezvousRoot::on_request(const ConnectionPtr& c) {
  if (c->request.kind == wire::RequestKind::StatusQuery) {
    std::string text = state_.failed() ? state_.failure() : state_.progress();
    send(c, std::make_shared<const std::string>(wire::encode_status(text)));
    return;
  }
  if (c->request.blob_bytes > wire::kMaxBlobBytes) {
    send(c, std::make_shared<const std::string>(wire::encode_error(
                dcInvalidArgument,
                "bootstrap blob of " + std::to_string(c->request.blob_bytes) + " bytes is over the limit")));
    return;
  }
  c->blob.resize(c->request.blob_bytes);
  asio::async_read(c->socket, asio::buffer(c->blob), [this, c](error_code ec, size_t) {
    if (ec) return c->close();
    on_join(c);
  });
}

void RendezvousRoot::on_join(const ConnectionPtr& c) {
  std::string rejection;
  switch (state_.join(c->request, std::move(c->blob), &rejection)) {
    case RendezvousState::Outcome::Accepted:
      waiting_.push_back(c);
      if (fail_on_departure_) watch_departure(c);
      break;
    case RendezvousState::Outcome::Complete:
      waiting_.push_back(c);
      send_table();
      break;
    case RendezvousState::Outcome::Rejected:
      send(c, std::make_shared<const std::string>(wire::encode_error(dcInvalidUsage, rejection)));
      break;
    case RendezvousState::Outcome::Failed:
      waiting_.push_back(c);
      fail_everyone();
      break;
  }
}

// A joined rank sends nothing more: its connection ending (or carrying bytes) before the table went
// out means it is gone, which fails the rendezvous for every rank now instead of at the deadline.
void RendezvousRoot::watch_departure(const ConnectionPtr& c) {
  auto byte = std::make_shared<uint8_t>();
  asio::async_read(c->socket, asio::buffer(byte.get(), 1), [this, c, byte](error_code ec, size_t) {
    if (ec == asio::error::operation_aborted || closing_ || state_.failed()) return;
    state_.fail_for_departure(c->request.rank);
    std::erase(waiting_, c);
    c->close();
    fail_everyone();
  });
}

void RendezvousRoot::send_table() {
  closing_ = true;
  close_acceptor();
  auto blobs = std::make_shared<const std::vector<std::string>>(state_.blobs());
  auto head = std::make_shared<const std::string>(wire::encode_table_header(*blobs));
  // Rank 0 is told last, once every other rank's table is written: the root usually lives in rank
  // 0's process, and rank 0 returning may end that process with the other writes still under way.
  for (const auto& c : waiting_) {
    if (c->request.rank == 0) told_last_ = TableReply{c, head, blobs};
    else send(c, head, blobs);
  }
  waiting_.clear();
  stop_when_sent();
}

// Later joiners of a failed rendezvous are told too, until the deadline.
void RendezvousRoot::fail_everyone() {
  auto message = std::make_shared<const std::string>(wire::encode_error(state_.failure_code(), state_.failure()));
  for (const auto& c : waiting_) send(c, message);
  waiting_.clear();
}

void RendezvousRoot::on_deadline() {
  if (!state_.failed()) {
    auto message = std::make_shared<const std::string>(wire::encode_error(
        dcSystemError,
        "bootstrap root deadline of " + std::to_string(deadline_.count()) + " ms passed: " + state_.progress()));
    for (const auto& c : waiting_) send(c, message);
  }
  waiting_.clear();
  closing_ = true;
  close_acceptor();
  deadline_timer_.expires_after(kFarewellGrace);
  deadline_timer_.async_wait([this](error_code ec) {
    if (!ec) io_.stop();
  });
  stop_when_sent();
}

void RendezvousRoot::send(const ConnectionPtr& c, std::shared_ptr<const std::string> head,
                          std::shared_ptr<const std::vector<std::string>> blobs) {
  std::vector<asio::const_buffer> buffers{asio::buffer(*head)};
  if (blobs)
    for (const auto& blob : *blobs) buffers.push_back(asio::buffer(blob));
  ++writes_in_flight_;
  asio::async_write(c->socket, buffers, [this, c, head, blobs](error_code, size_t) {
    --writes_in_flight_;
    stop_when_sent();
  });
}

void RendezvousRoot::close_acceptor() {
  listen_fd_ = -1;  // first, so that a fork never sees a closed (maybe reused) descriptor
  acceptor_.close();
  unproven_.clear();
}

void RendezvousRoot::stop_when_sent() {
  if (!closing_ || writes_in_flight_ > 0) return;
  if (told_last_) {
    TableReply last = std::move(*told_last_);
    told_last_.reset();
    send(last.connection, std::move(last.head), std::move(last.blobs));
    return;
  }
  io_.stop();
}

}  // namespace dc
