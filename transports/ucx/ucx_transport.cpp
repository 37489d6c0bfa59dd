// UCX transport: one UcxChannel per peer over the process's UCP worker. Its address, published
// through the bootstrap cards, is "<host hash>;<control socket ip:port>;<worker address in hex>".
// Set-up per peer: the lower rank dials the higher one's control socket (Connector: session and
// rank checked, each side's connection id in its hello's extra), then each side makes its
// endpoint from the peer's worker address. Endpoints to other hosts use UCX's peer-failure mode;
// on one host UCX 1.13's shared memory has none, so there the control socket alone reports death.
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include "src/base/log.h"
#include "transports/common/connector.h"
#include "transports/tcp/interface_select.h"
#include "transports/transport.h"
#include "transports/ucx/ucx_channel.h"
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
  std::string worker;
};

PeerAddress parse_address(const std::string& address) {
  const auto a = address.find(';');
  const auto b = a == std::string::npos ? a : address.find(';', a + 1);
  const auto colon = b == std::string::npos ? b : address.rfind(':', b);
  if (b == std::string::npos || colon == std::string::npos || colon < a)
    fail(dcInvalidArgument, "malformed ucx address '" + address.substr(0, 80) + "'");
  PeerAddress p;
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
  p.worker = address.substr(b + 1);
  return p;
}

uint16_t port_of(const GenericEndpoint& endpoint) {
  sockaddr_in in{};  // the control socket listens on an IPv4 interface address
  std::memcpy(&in, endpoint.data(), std::min(endpoint.size(), sizeof in));
  return ntohs(in.sin_port);
}

void put_id(Hello& hello, uint64_t id) { std::memcpy(hello.extra, &id, sizeof id); }
uint64_t id_of(const Hello& hello) {
  uint64_t id = 0;
  std::memcpy(&id, hello.extra, sizeof id);
  return id;
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
        connector_(std::make_shared<Connector>(io_, options.rank, options.session, "ucx")) {
    const NetInterface nic = select_interface(list_ipv4_interfaces(), socket_ifname_spec());
    connector_->listen(GenericEndpoint(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address(nic.ipv4), 0)));
    char host[17];
    std::snprintf(host, sizeof host, "%016llx", static_cast<unsigned long long>(host_));
    address_ = std::string(host) + ";" + nic.ipv4 + ":" + std::to_string(port_of(connector_->local_endpoint())) +
               ";" + worker_->address();
    DC_INFO("ucx transport: rank %d, control socket on %s (%s)", rank_, nic.ipv4.c_str(), nic.name.c_str());
  }

  ~UcxTransport() override {
    auto connector = connector_;
    boost::asio::post(io_, [connector] { connector->shutdown(); });
  }

  const char* name() const override { return "ucx"; }
  std::string address() const override { return address_; }

  void connect(int peer, const std::string& peer_address, int timeout_ms, ConnectDone done) override {
    if (peer == rank_) return report(done, Status::failure(dcInvalidArgument, "ucx transport: cannot connect to self"));
    auto channel = std::make_shared<UcxChannel>(worker_, peer);
    // The acceptor reads the peer's address only once the peer dialed (as the TCP transport does).
    auto established = [this, peer, peer_address, channel, done](const Status& status,
                                                                  std::unique_ptr<Connector::Socket> socket,
                                                                  const Hello& hello) {
      if (!status.ok()) return done(status, nullptr);
      try {
        const PeerAddress p = parse_address(peer_address);
        ucp_ep_h ep = worker_->connect(p.worker, p.host != host_, peer);
        channel->attach(ep, id_of(hello), std::move(*socket));
      } catch (const Error& e) {
        return done(Status::failure(e.code(), e.what()), nullptr);
      }
      done(Status::success(), std::make_shared<UcxConnection>(channel));
    };
    if (rank_ > peer) {
      const uint64_t id = channel->id();
      return connector_->accept(peer, timeout_ms, [id](const Hello&, Hello& reply) {
        put_id(reply, id);
        return Status::success();
      }, established);
    }
    PeerAddress p;
    try {
      p = parse_address(peer_address);
    } catch (const Error& e) {
      return report(done, Status::failure(e.code(), e.what()));
    }
    Hello hello = connector_->own_hello();
    put_id(hello, channel->id());
    connector_->dial(peer, p.control, hello, timeout_ms, established);
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
  std::shared_ptr<Connector> connector_;
  std::string address_;
};

}  // namespace

std::unique_ptr<Transport> make_ucx_transport(const TransportOptions& options) {
  if (!options.io) fail(dcInvalidArgument, "ucx transport: no io_context");
  return std::make_unique<UcxTransport>(options);
}

}  // namespace dc
