// Shared-memory transport for peers on one host. The control channel is a Unix stream socket in the
// abstract namespace (nothing on the file system to clean up); the dialer creates the connection's
// shared segment and names it in its hello, the acceptor maps and unlinks it before replying.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>

#include "src/base/log.h"
#include "transports/common/connector.h"
#include "transports/shm/shm_channel.h"
#include "transports/shm/shm_regions.h"
#include "transports/shm/shm_segment.h"
#include "transports/transport.h"

namespace dc {

namespace {

using GenericEndpoint = boost::asio::generic::stream_protocol::endpoint;

GenericEndpoint abstract_endpoint(const std::string& name) {
  return GenericEndpoint(boost::asio::local::stream_protocol::endpoint(std::string(1, '\0') + name));
}

// DEEPCOMM_SHM_CMA=0 turns single copy off (both cross-memory attach and same-process memcpy).
bool single_copy_enabled() {
  const char* v = std::getenv("DEEPCOMM_SHM_CMA");
  return !(v && std::strcmp(v, "0") == 0);
}

// Registering dcMemAlloc/ncclMemAlloc memory makes it shareable with peers (shm_regions.h): their
// receives copy straight out of it, also where cross-memory attach is forbidden. Other memory needs
// no registration here: single copy reads it by address at transfer time, and the fallback copies
// through the connection's own segment.
class ShmTransport : public Transport {
 public:
  explicit ShmTransport(const TransportOptions& options)
      : io_(*options.io),
        rank_(options.rank),
        session_(options.session),
        single_copy_(single_copy_enabled()),
        connector_(std::make_shared<Connector>(io_, options.rank, options.session, "shm")) {
    std::random_device random;
    char name[96];
    std::snprintf(name, sizeof name, "deepcomm-shm-%016llx-%d-%08x%08x",
                  static_cast<unsigned long long>(session_), rank_, random(), random());
    address_ = name;
    regions_ = std::make_shared<ShmRegions>(address_, session_, rank_);
    connector_->listen(abstract_endpoint(address_));
    DC_INFO("shm transport: rank %d listens on @%s (single copy %s)", rank_, address_.c_str(),
            single_copy_ ? "on" : "off");
  }

  ~ShmTransport() override {
    auto connector = connector_;
    boost::asio::post(io_, [connector] { connector->shutdown(); });
  }

  const char* name() const override { return "shm"; }
  std::string address() const override { return address_; }

  void connect(int peer, const std::string& peer_address, int timeout_ms, ConnectDone done) override {
    if (peer == rank_) return report(done, Status::failure(dcInvalidArgument, "shm transport: cannot connect to self"));
    if (rank_ > peer) return accept(peer, peer_address, timeout_ms, std::move(done));
    std::shared_ptr<ShmSegment> segment;
    try {
      segment = ShmSegment::create(session_);
    } catch (const Error& e) {
      return report(done, Status::failure(e.code(), e.what()));
    }
    Hello hello = connector_->own_hello();
    std::snprintf(hello.extra, sizeof hello.extra, "%s", segment->name().c_str());
    connector_->dial(peer, abstract_endpoint(peer_address), hello, timeout_ms,
                     [this, peer, peer_address, segment, done](const Status& status,
                                                               std::unique_ptr<Connector::Socket> socket,
                                                               const Hello& reply) {
                       segment->unlink();  // the acceptor mapped it before replying
                       if (!status.ok()) return done(status, nullptr);
                       established(peer, peer_address, std::move(socket), reply, segment, true, done);
                     });
  }

  MemoryRegistration register_memory(void* addr, size_t size) override {
    const uint64_t id = regions_->export_region(addr, size);
    if (!id) {
      DC_INFO("shm transport: registered memory at %p is not from ncclMemAlloc; peers read it by "
              "cross-memory attach where allowed, else through the connection's segment", addr);
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
  void accept(int peer, const std::string& peer_address, int timeout_ms, ConnectDone done) {
    auto segment = std::make_shared<std::shared_ptr<ShmSegment>>();
    auto prepare = [segment](const Hello& hello, Hello&) {
      try {
        *segment = ShmSegment::open(std::string(hello.extra, strnlen(hello.extra, sizeof hello.extra)));
      } catch (const Error& e) {
        return Status::failure(e.code(), e.what());
      }
      return Status::success();
    };
    connector_->accept(peer, timeout_ms, prepare,
                       [this, peer, peer_address, segment, done](const Status& status,
                                                                 std::unique_ptr<Connector::Socket> socket,
                                                                 const Hello& hello) {
                         if (!status.ok()) return done(status, nullptr);
                         established(peer, peer_address, std::move(socket), hello, *segment, false, done);
                       });
  }

  void established(int peer, const std::string& peer_address, std::unique_ptr<Connector::Socket> socket,
                   const Hello& hello, std::shared_ptr<ShmSegment> segment, bool dialer,
                   const ConnectDone& done) {
    auto channel = std::make_shared<ShmChannel>(io_, std::move(*socket), peer, hello.pid, std::move(segment),
                                                regions_, peer_address, dialer, single_copy_);
    channels_.push_back(channel);
    channel->start();
    done(Status::success(), std::make_shared<OwnedConnection>(channel));
  }

  void report(const ConnectDone& done, const Status& status) {
    boost::asio::post(io_, [done, status] { done(status, nullptr); });
  }

  boost::asio::io_context& io_;
  int rank_;
  uint64_t session_;
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
