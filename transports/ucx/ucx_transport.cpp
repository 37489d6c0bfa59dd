// UCX transport: one UcxChannel per peer over the process's UCP worker. Its address, published
// through the bootstrap cards, is "<host hash>;<control socket ip:port>;<token>;<worker address in
// hex>". Set-up per peer: the lower rank dials the higher one's control socket (Connector: the
// handshake proves the unique id's secret, the hello's token binds the rank to its card), then the
// two sides swap their channels' connection ids over that socket and each makes its endpoint from
// the peer's worker address. Endpoints to other hosts use UCX's peer-failure mode; on one host UCX
// 1.13's shared memory has none, so there the control socket alone reports death.
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "base/log.h"
#include "base/net_interface.h"
#include "transports/common/connector.h"
#include "transports/transport.h"
#include "transports/ucx/ucx_channel.h"
#include "transports/ucx/ucx_policy.h"
#include "transports/ucx/ucx_worker.h"

namespace dc {

namespace {

using GenericEndpoint = boost::asio::generic::stream_protocol::endpoint;

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

struct PeerAddress {
  uint64_t host = 0;
  GenericEndpoint control;
  PeerToken token{};
  std::string worker;
};

PeerAddress parse_address(const std::string& address) {
  const auto a = address.find(';');
  const auto b = a == std::string::npos ? a : address.find(';', a + 1);
  const auto c = b == std::string::npos ? b : address.find(';', b + 1);
  const auto colon = b == std::string::npos ? b : address.rfind(':', b);
  PeerAddress p;
  if (c == std::string::npos || colon == std::string::npos || colon < a ||
      !token_from_hex(std::string_view(address).substr(b + 1, c - b - 1), &p.token))
    fail(dcInvalidArgument, "malformed ucx address '" + address.substr(0, 80) + "'");
  boost::system::error_code ec;
  auto ip = boost::asio::ip::make_address(address.substr(a + 1, colon - a - 1), ec);
  unsigned long port = 0;
  try {
    p.host = std::stoull(address.substr(0, a), nullptr, 16);
    port = std::stoul(address.substr(colon + 1, b - colon - 1));
  } catch (const std::exception&) {
    ec = boost::asio::error::invalid_argument;
  }
  if (ec || port == 0 || port > 65535) fail(dcInvalidArgument, "malformed ucx address '" + address.substr(0, 80) + "'");
  p.control = GenericEndpoint(boost::asio::ip::tcp::endpoint(ip, static_cast<unsigned short>(port)));
  p.worker = address.substr(c + 1);
  return p;
}

uint16_t port_of(const GenericEndpoint& endpoint) {
  sockaddr_in in{};  // the control socket listens on an IPv4 interface address
  std::memcpy(&in, endpoint.data(), std::min(endpoint.size(), sizeof in));
  return ntohs(in.sin_port);
}

// After the handshake each side writes its channel's connection id on the control socket and
// reads the peer's (8 bytes each way, both fit a socket buffer), before the deadline.
struct IdSwap {
  std::unique_ptr<Connector::Socket> socket;
  boost::asio::steady_timer timer;
  uint64_t own = 0;
  uint64_t peer = 0;
  bool finished = false;
  IdSwap(std::unique_ptr<Connector::Socket> s, uint64_t id)
      : socket(std::move(s)), timer(socket->get_executor()), own(id) {}
};

void swap_ids(const std::shared_ptr<IdSwap>& swap, int timeout_ms, std::function<void(const Status&)> done) {
  swap->timer.expires_after(std::chrono::milliseconds(timeout_ms));
  swap->timer.async_wait([swap](const boost::system::error_code& ec) {
    if (!ec && !swap->finished) swap->socket->close();
  });
  boost::asio::async_write(*swap->socket, boost::asio::buffer(&swap->own, sizeof swap->own),
                           [](const boost::system::error_code&, size_t) {});
  boost::asio::async_read(
      *swap->socket, boost::asio::buffer(&swap->peer, sizeof swap->peer),
      [swap, done](const boost::system::error_code& ec, size_t) {
        swap->finished = true;
        swap->timer.cancel();
        if (ec) return done(Status::failure(dcRemoteError, "no connection id from the peer: " + ec.message()));
        done(Status::success());
      });
}

// What a Transport hands out: closes the channel when the last user reference goes away.
class UcxConnection : public Connection {
 public:
  explicit UcxConnection(std::shared_ptr<UcxChannel> channel) : channel_(std::move(channel)) {}
  // Released on the engine thread, like every transport object.
  ~UcxConnection() override { channel_->close(Status::failure(dcInvalidUsage, "the connection was released")); }
  void send(const Tag& tag, const void* buf, size_t len, Completion done) override {
    channel_->send(tag, buf, len, std::move(done));
  }
  void recv(const Tag& tag, void* buf, size_t capacity, Completion done) override {
    channel_->recv(tag, buf, capacity, std::move(done));
  }
  void close(const Status& status) override { channel_->close(status); }
  void flush(std::function<void()> done) override { channel_->flush(std::move(done)); }
  void cancel(uint64_t comm, uint64_t seq) override { channel_->cancel(comm, seq); }
  const char* transport_name() const override { return "ucx"; }
  TransportCounters counters() const override { return channel_->counters(); }
  size_t release_idle_memory() override { return channel_->release_idle_memory(); }
  std::weak_ptr<const void> remains() const override {
    return channel_->closed() ? std::weak_ptr<const void>() : std::weak_ptr<const void>(channel_);
  }

 private:
  std::shared_ptr<UcxChannel> channel_;
};

class UcxTransport : public Transport {
 public:
  explicit UcxTransport(const TransportOptions& options)
      : io_(*options.io),
        rank_(options.rank),
        host_(fnv1a(options.host_id)),
        worker_(UcxWorker::get(io_)),
        token_(random_token()) {
    Connector::Identity me{options.rank, options.session, options.secret, token_, handshake::Purpose::UcxPeer, "ucx"};
    connector_ = std::make_shared<Connector>(io_, me);
    const NetInterface nic = chosen_interface();
    const auto ip = boost::asio::ip::make_address(nic.address);
    if (!ip.is_v4()) fail(dcSystemError, "ucx transport: the chosen interface " + nic.name + " has no IPv4 address");
    connector_->bind(GenericEndpoint(boost::asio::ip::tcp::endpoint(ip, 0)));
    char host[17];
    std::snprintf(host, sizeof host, "%016llx", static_cast<unsigned long long>(host_));
    address_ = std::string(host) + ";" + nic.address + ":" + std::to_string(port_of(connector_->local_endpoint())) +
               ";" + token_hex(token_) + ";" + worker_->address();
    DC_INFO("ucx transport: rank %d, control socket on %s (%s)", rank_, nic.address.c_str(), nic.name.c_str());
  }

  ~UcxTransport() override {
    auto connector = connector_;
    boost::asio::post(io_, [connector] { connector->shutdown(); });
  }

  std::weak_ptr<const void> remains() const override { return connector_; }
  const char* name() const override { return "ucx"; }
  std::string address() const override { return address_; }
  bool receives_in_place_on_host() const override { return ucx_moves_in_place(true); }

  void connect(int peer, const std::string& peer_address, int timeout_ms, ConnectDone done) override {
    if (peer == rank_) return report(done, Status::failure(dcInvalidArgument, "ucx transport: cannot connect to self"));
    PeerAddress p;
    try {
      p = parse_address(peer_address);
    } catch (const Error& e) {
      return report(done, Status::failure(e.code(), e.what()));
    }
    auto channel = std::make_shared<UcxChannel>(worker_, peer);
    auto established = [this, peer, p, channel, timeout_ms, done](const Status& status,
                                                                  std::unique_ptr<Connector::Socket> socket) {
      if (!status.ok()) return done(status, nullptr);
      auto swap = std::make_shared<IdSwap>(std::move(socket), channel->id());
      swap_ids(swap, timeout_ms, [this, peer, p, channel, swap, done](const Status& swapped) {
        if (!swapped.ok()) return done(swapped, nullptr);
        try {
          ucp_ep_h ep = worker_->connect(p.worker, p.host != host_, peer);
          channel->attach(ep, swap->peer, std::move(*swap->socket), ucx_moves_in_place(p.host == host_));
        } catch (const Error& e) {
          return done(Status::failure(e.code(), e.what()), nullptr);
        }
        done(Status::success(), std::make_shared<UcxConnection>(channel));
      });
    };
    if (rank_ > peer) return connector_->accept(peer, p.token, nullptr, timeout_ms, established);
    connector_->dial(peer, p.control, p.token, nullptr, timeout_ms, established);
  }

  MemoryRegistration register_memory(void* addr, size_t size) override {
    try {
      return MemoryRegistration{addr, size, worker_->map_memory(addr, size)};
    } catch (const Error& e) {
      DC_WARN("%s; the buffer at %p stays unregistered for UCX", e.what(), addr);
      return MemoryRegistration{addr, size, nullptr};
    }
  }
  void deregister_memory(MemoryRegistration& registration) override { registration.transport_state.reset(); }

 private:
  void report(const ConnectDone& done, const Status& status) {
    boost::asio::post(io_, [done, status] { done(status, nullptr); });
  }

  boost::asio::io_context& io_;
  int rank_;
  uint64_t host_;
  std::shared_ptr<UcxWorker> worker_;
  PeerToken token_;
  std::shared_ptr<Connector> connector_;
  std::string address_;
};

}  // namespace

std::unique_ptr<Transport> make_ucx_transport(const TransportOptions& options) {
  if (!options.io) fail(dcInvalidArgument, "ucx transport: no io_context");
  return std::make_unique<UcxTransport>(options);
}

}  // namespace dc
