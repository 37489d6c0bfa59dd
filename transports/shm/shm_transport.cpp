// Shared-memory transport for peers on one host. The control channel is a Unix stream socket in the
// abstract namespace (nothing on the file system to clean up) under a random name. Its address,
// published in the rank's card, is "<token>:<pid>:<uid>": a connection is accepted only from the
// process that card names, as the kernel reports it (SO_PEERCRED), after the handshake proved the
// secret and the hello carried the token, and only then is that pid read by cross-memory attach.
// Shared segments are memfds passed over the connection (shm_channel.h).
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>

#include "base/log.h"
#include "transports/common/connector.h"
#include "transports/settings.h"
#include "transports/shm/shm_channel.h"
#include "transports/shm/shm_regions.h"
#include "transports/transport.h"

namespace dc {

namespace {

using GenericEndpoint = boost::asio::generic::stream_protocol::endpoint;

GenericEndpoint abstract_endpoint(const PeerToken& token) {
  return GenericEndpoint(
      boost::asio::local::stream_protocol::endpoint(std::string(1, '\0') + "deepcomm-" + token_hex(token)));
}

struct PeerAddress {
  PeerToken token{};
  pid_t pid = 0;
  uid_t uid = 0;
};

// "<32 hex digits>:<pid>:<uid>".
PeerAddress parse_address(const std::string& text) {
  PeerAddress a;
  const auto first = text.find(':');
  const auto second = first == std::string::npos ? first : text.find(':', first + 1);
  char* end = nullptr;
  if (second != std::string::npos && token_from_hex(std::string_view(text).substr(0, first), &a.token)) {
    const long pid = std::strtol(text.c_str() + first + 1, &end, 10);
    if (end == text.c_str() + second && pid > 0) {
      const unsigned long uid = std::strtoul(text.c_str() + second + 1, &end, 10);
      if (*end == '\0' && end != text.c_str() + second + 1) {
        a.pid = static_cast<pid_t>(pid);
        a.uid = static_cast<uid_t>(uid);
        return a;
      }
    }
  }
  fail(dcInvalidArgument, "malformed shm address '" + text + "'");
}

// The kernel's word on who is at the other end, against the peer's card.
Connector::Verify credentials_of(const PeerAddress& card) {
  return [card](Connector::Socket& socket) -> std::string {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
      return std::string("SO_PEERCRED failed: ") + std::strerror(errno);
    if (cred.pid == card.pid && cred.uid == card.uid) return "";
    return "the process at the other end is pid " + std::to_string(cred.pid) + " uid " + std::to_string(cred.uid) +
           ", the rank's card says pid " + std::to_string(card.pid) + " uid " + std::to_string(card.uid) +
           " (ranks in different pid namespaces cannot share memory: set DEEPCOMM_TRANSPORT=tcp or "
           "DEEPCOMM_HOST_ID)";
  };
}

// DEEPCOMM_SHM_CMA=0 turns single copy off (both cross-memory attach and same-process memcpy).
bool single_copy_enabled() { return config::flag_if_set(settings::kShmCma).value_or(true); }

// What the shm transport hands out: a connection that can also share memory with the peer.
class ShmConnection : public OwnedConnection {
 public:
  explicit ShmConnection(std::shared_ptr<ShmChannel> channel) : OwnedConnection(channel), shm_(std::move(channel)) {}
  bool pass_memory(uint64_t key, int fd, size_t bytes) override { return shm_->pass_memory(key, fd, bytes); }
  void receive_memory(uint64_t key, size_t bytes, std::function<void(int fd)> done) override {
    shm_->receive_memory(key, bytes, std::move(done));
  }

 private:
  std::shared_ptr<ShmChannel> shm_;
};

// Registering dcMemAlloc/ncclMemAlloc memory makes it shareable with peers (shm_regions.h): their
// receives copy straight out of it, also where cross-memory attach is forbidden. Other memory needs
// no registration here: single copy reads it by address at transfer time, and the fallback copies
// through the connection's own segment.
class ShmTransport : public Transport {
 public:
  explicit ShmTransport(const TransportOptions& options)
      : io_(*options.io),
        rank_(options.rank),
        token_(random_token()),
        single_copy_(single_copy_enabled()),
        regions_(std::make_shared<ShmRegions>()) {
    Connector::Identity me{options.rank, options.session, options.secret, token_, handshake::Purpose::ShmPeer, "shm"};
    connector_ = std::make_shared<Connector>(io_, me);
    connector_->bind(abstract_endpoint(token_));
    address_ = token_hex(token_) + ":" + std::to_string(getpid()) + ":" + std::to_string(getuid());
    DC_INFO("shm transport: rank %d bound @deepcomm-%s (single copy %s)", rank_, token_hex(token_).c_str(),
            single_copy_ ? "on" : "off");
  }

  ~ShmTransport() override {
    auto connector = connector_;
    boost::asio::post(io_, [connector] { connector->shutdown(); });
  }

  std::weak_ptr<const void> remains() const override { return connector_; }
  const char* name() const override { return "shm"; }
  std::string address() const override { return address_; }

  void connect(int peer, const std::string& peer_address, int timeout_ms, ConnectDone done) override {
    if (peer == rank_) return report(done, Status::failure(dcInvalidArgument, "shm transport: cannot connect to self"));
    PeerAddress card;
    try {
      card = parse_address(peer_address);
    } catch (const Error& e) {
      return report(done, Status::failure(e.code(), e.what()));
    }
    auto established = [this, peer, card, done](const Status& status, std::unique_ptr<Connector::Socket> socket) {
      if (!status.ok()) return done(status, nullptr);
      auto channel = std::make_shared<ShmChannel>(io_, make_unix_fd_stream(std::move(*socket)), peer, card.pid,
                                                  regions_, single_copy_);
      channels_.push_back(channel);
      channel->start();
      done(Status::success(), std::make_shared<ShmConnection>(channel));
    };
    if (rank_ > peer) return connector_->accept(peer, card.token, credentials_of(card), timeout_ms, established);
    connector_->dial(peer, abstract_endpoint(card.token), card.token, credentials_of(card), timeout_ms, established);
  }

  MemoryRegistration register_memory(void* addr, size_t size) override {
    const uint64_t id = regions_->export_region(addr, size);
    if (!id) {
      DC_INFO(
          "shm transport: registered memory at %p is not from ncclMemAlloc; peers read it by "
          "cross-memory attach where allowed, else through the connection's segment",
          addr);
      return MemoryRegistration{addr, size, nullptr};
    }
    return MemoryRegistration{addr, size, std::make_shared<uint64_t>(id)};
  }

  void deregister_memory(MemoryRegistration& registration) override {
    if (!registration.transport_state) return;
    const uint64_t id = *static_cast<uint64_t*>(registration.transport_state.get());
    for (auto it = channels_.begin(); it != channels_.end();) {
      auto channel = it->lock();
      if (!channel) {
        it = channels_.erase(it);
        continue;
      }
      channel->withdraw_region(id);
      ++it;
    }
    regions_->unexport_region(id);
    registration.transport_state.reset();
  }

 private:
  void report(const ConnectDone& done, const Status& status) {
    boost::asio::post(io_, [done, status] { done(status, nullptr); });
  }

  boost::asio::io_context& io_;
  int rank_;
  PeerToken token_;
  bool single_copy_;
  std::shared_ptr<Connector> connector_;
  std::string address_;
  std::shared_ptr<ShmRegions> regions_;
  std::vector<std::weak_ptr<ShmChannel>> channels_;  // to withdraw deregistered regions
};

}  // namespace

std::unique_ptr<Transport> make_shm_transport(const TransportOptions& options) {
  if (!options.io) fail(dcInvalidArgument, "shm transport: no io_context");
  return std::make_unique<ShmTransport>(options);
}

}  // namespace dc
