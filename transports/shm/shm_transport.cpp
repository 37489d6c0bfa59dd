// Shared-memory transport for peers on one host. The control channel is a Unix stream socket in the
// abstract namespace (nothing on the file system to clean up); the dialer creates the connection's
// shared segment and names it in its hello, the acceptor maps and unlinks it before replying.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>

#include "src/core/log.h"
#include "transports/common/connector.h"
#include "transports/shm/shm_channel.h"
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

// Memory registration stays the default (no-op): single copy reads the sender's buffer by address at
// transfer time and the fallback copies through the connection's own segment, so no user buffer is
// ever mapped or pinned ahead of time.
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
    if (rank_ > peer) return accept(peer, timeout_ms, std::move(done));
    std::shared_ptr<ShmSegment> segment;
    try {
      segment = ShmSegment::create(session_);
    } catch (const Error& e) {
      return report(done, Status::failure(e.code(), e.what()));
    }
    Hello hello = connector_->own_hello();
    std::snprintf(hello.extra, sizeof hello.extra, "%s", segment->name().c_str());
    connector_->dial(peer, abstract_endpoint(peer_address), hello, timeout_ms,
                     [this, peer, segment, done](const Status& status,
                                                 std::unique_ptr<Connector::Socket> socket,
                                                 const Hello& reply) {
                       segment->unlink();  // the acceptor mapped it before replying
                       if (!status.ok()) return done(status, nullptr);
                       established(peer, std::move(socket), reply, segment, true, done);
                     });
  }

 private:
  void accept(int peer, int timeout_ms, ConnectDone done) {
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
                       [this, peer, segment, done](const Status& status,
                                                   std::unique_ptr<Connector::Socket> socket,
                                                   const Hello& hello) {
                         if (!status.ok()) return done(status, nullptr);
                         established(peer, std::move(socket), hello, *segment, false, done);
                       });
  }

  void established(int peer, std::unique_ptr<Connector::Socket> socket, const Hello& hello,
                   std::shared_ptr<ShmSegment> segment, bool dialer, const ConnectDone& done) {
    auto channel = std::make_shared<ShmChannel>(io_, std::move(*socket), peer, hello.pid,
                                                std::move(segment), dialer, single_copy_);
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
};

}  // namespace

std::unique_ptr<Transport> make_shm_transport(const TransportOptions& options) {
  if (!options.io) fail(dcInvalidArgument, "shm transport: no io_context");
  return std::make_unique<ShmTransport>(options);
}

}  // namespace dc
