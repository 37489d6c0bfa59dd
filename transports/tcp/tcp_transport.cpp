// TCP transport: the framed message channel over TCP sockets. Rendezvous payloads are written as one
// Data frame that the receiver reads straight into the posted buffer.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstring>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include "src/base/log.h"
#include "transports/common/connector.h"
#include "transports/common/message_channel.h"
#include "transports/tcp/interface_select.h"
#include "transports/transport.h"

namespace dc {

namespace {

using GenericEndpoint = boost::asio::generic::stream_protocol::endpoint;

constexpr int kSocketBufferBytes = 4 * 1024 * 1024;

// "a.b.c.d:port" or "[v6]:port".
GenericEndpoint parse_address(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    fail(dcInvalidArgument, "malformed tcp address '" + address + "'");
  }
  std::string host = address.substr(0, colon);
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  boost::system::error_code ec;
  auto ip = boost::asio::ip::make_address(host, ec);
  unsigned long port = 0;
  try {
    port = std::stoul(address.substr(colon + 1));
  } catch (const std::exception&) {
    ec = boost::asio::error::invalid_argument;
  }
  if (ec || port == 0 || port > 65535) fail(dcInvalidArgument, "malformed tcp address '" + address + "'");
  return GenericEndpoint(boost::asio::ip::tcp::endpoint(ip, static_cast<unsigned short>(port)));
}

uint16_t port_of(const GenericEndpoint& endpoint) {
  sockaddr_storage storage{};
  std::memcpy(&storage, endpoint.data(), std::min(endpoint.size(), sizeof storage));
  if (storage.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
}

void tune_socket(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSocketBufferBytes, sizeof kSocketBufferBytes);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &kSocketBufferBytes, sizeof kSocketBufferBytes);
}

// Memory registration stays the default (no-op): the kernel copies from/into any user buffer, so
// there is nothing to pin or to invalidate.
class TcpTransport : public Transport {
 public:
  explicit TcpTransport(const TransportOptions& options)
      : io_(*options.io),
        rank_(options.rank),
        connector_(std::make_shared<Connector>(io_, options.rank, options.session, "tcp")) {
    const NetInterface nic = select_interface(list_ipv4_interfaces(), socket_ifname_spec());
    connector_->listen(GenericEndpoint(
        boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address(nic.ipv4), 0)));
    address_ = nic.ipv4 + ":" + std::to_string(port_of(connector_->local_endpoint()));
    DC_INFO("tcp transport: rank %d listens on %s (%s)", rank_, address_.c_str(), nic.name.c_str());
  }

  ~TcpTransport() override {
    auto connector = connector_;
    boost::asio::post(io_, [connector] { connector->shutdown(); });
  }

  const char* name() const override { return "tcp"; }
  std::string address() const override { return address_; }

  void connect(int peer, const std::string& peer_address, int timeout_ms, ConnectDone done) override {
    auto established = [this, peer, done](const Status& status,
                                          std::unique_ptr<Connector::Socket> socket, const Hello&) {
      if (!status.ok()) return done(status, nullptr);
      tune_socket(socket->native_handle());
      auto channel = std::make_shared<MessageChannel>(io_, std::move(*socket), peer, "tcp");
      channel->start();
      done(Status::success(), std::make_shared<OwnedConnection>(channel));
    };
    if (peer == rank_) return report(done, Status::failure(dcInvalidArgument, "tcp transport: cannot connect to self"));
    if (rank_ > peer) return connector_->accept(peer, timeout_ms, nullptr, established);
    GenericEndpoint endpoint;
    try {
      endpoint = parse_address(peer_address);
    } catch (const Error& e) {
      return report(done, Status::failure(e.code(), e.what()));
    }
    connector_->dial(peer, endpoint, connector_->own_hello(), timeout_ms, established);
  }

 private:
  void report(const ConnectDone& done, const Status& status) {
    boost::asio::post(io_, [done, status] { done(status, nullptr); });
  }

  boost::asio::io_context& io_;
  int rank_;
  std::shared_ptr<Connector> connector_;
  std::string address_;
};

}  // namespace

std::unique_ptr<Transport> make_tcp_transport(const TransportOptions& options) {
  if (!options.io) fail(dcInvalidArgument, "tcp transport: no io_context");
  return std::make_unique<TcpTransport>(options);
}

}  // namespace dc
