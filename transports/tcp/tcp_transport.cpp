// TCP transport: the framed message channel over TCP sockets. Rendezvous payloads are written as
// Data frames that the receiver reads straight into the posted buffer. Its address is
// "a.b.c.d:port/token" (or "[v6]:port/token"): the interface chosen by NCCL_SOCKET_IFNAME's rules
// (base/net_interface.h), bound at once but listened on only when a peer must dial in, so a
// communicator whose peers all share memory opens no TCP listener.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstring>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include "base/log.h"
#include "base/net_interface.h"
#include "transports/common/connector.h"
#include "transports/common/message_channel.h"
#include "transports/transport.h"

namespace dc {

namespace {

using GenericEndpoint = boost::asio::generic::stream_protocol::endpoint;

constexpr int kSocketBufferBytes = 4 * 1024 * 1024;
// At most this much written but not yet sent waits in the kernel (TCP_NOTSENT_LOWAT); the rest waits
// in the channel's queue, where answers to the peer (clear-to-send) overtake payload. Without the
// bound a socket buffer holding megabytes delays every answer behind them: the binomial tree's
// broadcast, whose clear-to-send frames travel against its reduce, started only once the reduce
// had crossed (64 MiB on 2 hosts x 4 ranks at 1 Gbit/s: 1.0 s; answers first 0.70 s; with this bound
// 0.65 s). Large enough that the engine need not be scheduled every millisecond to keep a fast
// link busy.
constexpr int kUnsentBytes = 1024 * 1024;

struct PeerAddress {
  GenericEndpoint endpoint;
  PeerToken token{};
};

// "a.b.c.d:port/token" or "[v6]:port/token".
PeerAddress parse_address(const std::string& text) {
  const auto slash = text.rfind('/');
  PeerAddress parsed;
  if (slash == std::string::npos || !token_from_hex(std::string_view(text).substr(slash + 1), &parsed.token))
    fail(dcInvalidArgument, "malformed tcp address '" + text + "'");
  const std::string address = text.substr(0, slash);
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
  if (ec || port == 0 || port > 65535) fail(dcInvalidArgument, "malformed tcp address '" + text + "'");
  parsed.endpoint = GenericEndpoint(boost::asio::ip::tcp::endpoint(ip, static_cast<unsigned short>(port)));
  return parsed;
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
  setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &kUnsentBytes, sizeof kUnsentBytes);
}

// Memory registration stays the default (no-op): the kernel copies from/into any user buffer, so
// there is nothing to pin or to invalidate.
class TcpTransport : public Transport {
 public:
  explicit TcpTransport(const TransportOptions& options)
      : io_(*options.io), rank_(options.rank), token_(random_token()) {
    Connector::Identity me{options.rank, options.session, options.secret, token_, handshake::Purpose::TcpPeer, "tcp"};
    connector_ = std::make_shared<Connector>(io_, me);
    const NetInterface nic = chosen_interface();
    const auto ip = boost::asio::ip::make_address(nic.address);
    connector_->bind(GenericEndpoint(boost::asio::ip::tcp::endpoint(ip, 0)));
    const std::string host = ip.is_v6() ? "[" + nic.address + "]" : nic.address;
    address_ = host + ":" + std::to_string(port_of(connector_->local_endpoint())) + "/" + token_hex(token_);
    DC_INFO("tcp transport: rank %d bound %s (%s)", rank_, address_.c_str(), nic.name.c_str());
  }

  ~TcpTransport() override {
    auto connector = connector_;
    boost::asio::post(io_, [connector] { connector->shutdown(); });
  }

  std::weak_ptr<const void> remains() const override { return connector_; }
  const char* name() const override { return "tcp"; }
  std::string address() const override { return address_; }

  void connect(int peer, const std::string& peer_address, int timeout_ms, ConnectDone done) override {
    auto established = [this, peer, done](const Status& status, std::unique_ptr<Connector::Socket> socket) {
      if (!status.ok()) return done(status, nullptr);
      tune_socket(socket->native_handle());
      auto channel = std::make_shared<MessageChannel>(io_, make_socket_stream(std::move(*socket)), peer, "tcp");
      channel->start();
      done(Status::success(), std::make_shared<OwnedConnection>(channel));
    };
    if (peer == rank_) return report(done, Status::failure(dcInvalidArgument, "tcp transport: cannot connect to self"));
    PeerAddress parsed;
    try {
      parsed = parse_address(peer_address);
    } catch (const Error& e) {
      return report(done, Status::failure(e.code(), e.what()));
    }
    if (rank_ > peer) return connector_->accept(peer, parsed.token, nullptr, timeout_ms, established);
    connector_->dial(peer, parsed.endpoint, parsed.token, nullptr, timeout_ms, established);
  }

 private:
  void report(const ConnectDone& done, const Status& status) {
    boost::asio::post(io_, [done, status] { done(status, nullptr); });
  }

  boost::asio::io_context& io_;
  int rank_;
  PeerToken token_;
  std::shared_ptr<Connector> connector_;
  std::string address_;
};

}  // namespace

std::unique_ptr<Transport> make_tcp_transport(const TransportOptions& options) {
  if (!options.io) fail(dcInvalidArgument, "tcp transport: no io_context");
  return std::make_unique<TcpTransport>(options);
}

}  // namespace dc
