// The transport contract. Shaped for RDMA, not for a byte stream: messages are tagged and matched by
// tag (never by arrival order), buffers stay owned by the caller until their completion fires, a
// receive may not know the exact size (it completes with the bytes received, <= capacity), and
// memory can be registered. Small messages go eagerly, large ones by rendezvous, with bounded memory
// per peer. Everything here runs inside the progress engine's handlers (its boost::asio::io_context,
// run by one thread at a time: the engine thread or a caller waiting for its operations, see
// src/exec/engine.h): completions are called there, and the engine blocks in epoll on the
// transports' sockets. "The engine thread" below means whichever thread runs the handlers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "base/error.h"
#include "base/handshake.h"

namespace dc {

// Exact-match tag. comm: communicator id; seq: operation sequence number; step: plan step tag (or
// point-to-point sequence). check is not matched on: it is the operation's signature, and a send
// and receive of the same (comm, seq) whose nonzero checks differ mean the ranks called different
// operations: the receive then fails with dcInvalidUsage and Status::detail = the peer's check.
struct Tag {
  uint64_t comm = 0;
  uint64_t seq = 0;
  uint64_t step = 0;
  uint64_t check = 0;
  bool operator==(const Tag& o) const { return comm == o.comm && seq == o.seq && step == o.step; }
};

// Whether two tags of one operation (comm, seq) carry signatures that disagree.
inline bool signatures_differ(const Tag& a, const Tag& b) {
  return a.comm == b.comm && a.seq == b.seq && a.check && b.check && a.check != b.check;
}

inline Status signature_mismatch(uint64_t peer_check) {
  Status s = Status::failure(dcInvalidUsage, "DeepComm: the peer called a different operation");
  s.detail = peer_check;
  return s;
}

// How a receive ends when its operation is cancelled (cancel() below).
inline Status receive_cancelled() {
  return Status::failure(dcSystemError, "DeepComm: receive cancelled: its operation failed");
}

// How a receive ends when the message is longer than its buffer.
inline Status message_too_long(size_t len, size_t capacity) {
  return Status::failure(dcInvalidUsage, "received message of " + std::to_string(len) +
                                             " bytes is larger than the posted buffer of " + std::to_string(capacity) +
                                             " bytes");
}

struct TagHash {
  size_t operator()(const Tag& t) const {
    uint64_t h = t.comm * 0x9E3779B97F4A7C15ull ^ (t.seq + 0x632BE59BD9B4E019ull + (t.comm << 6));
    return static_cast<size_t>(h ^ (t.step * 0xC2B2AE3D27D4EB4Full));
  }
};

// Called on the engine thread. bytes = bytes transferred (a receive: the message's real size).
using Completion = std::function<void(const Status& status, size_t bytes)>;

// Takes a received message piece by piece, in order, while each piece is in cache: `data` holds the
// `len` bytes at `offset` of the message and is valid only during the call (engine thread).
using PieceSink = std::function<void(const void* data, size_t offset, size_t len)>;

struct TransportCounters {
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  // Of bytes_received, large (rendezvous) messages that came through the transport's own staging
  // memory (shm segment slots), and those copied straight out of the sender's registered memory
  // mapped into this process.
  uint64_t bytes_received_staged = 0;
  uint64_t bytes_received_mapped = 0;
};

// One established, bidirectional channel to one peer.
class Connection {
 public:
  virtual ~Connection() = default;
  // buf must stay valid and unchanged until done runs.
  virtual void send(const Tag& tag, const void* buf, size_t len, Completion done) = 0;
  // A message longer than capacity completes with dcInvalidUsage (nothing written past capacity).
  virtual void recv(const Tag& tag, void* buf, size_t capacity, Completion done) = 0;
  // A receive whose message the transport may hand to `sink` in pieces instead of writing it to buf
  // (a reduction then reads each piece from cache, not from memory). A message goes either wholly
  // to the sink, before done runs, or wholly to buf. By default, always to buf.
  virtual void recv_pieces(const Tag& tag, void* buf, size_t capacity, PieceSink /*sink*/, Completion done) {
    recv(tag, buf, capacity, std::move(done));
  }
  // Fails every pending and future operation with status (abort, peer death).
  virtual void close(const Status& status) = 0;
  // Runs done once everything queued for the peer so far (including protocol replies such as
  // rendezvous acknowledgements) left this process for good, or the connection failed: handed to
  // the kernel, or over UCX, taken by the peer (a rendezvous payload waits here until the peer
  // fetches it; the data and the control socket whose end reports death travel apart). Destroying
  // a communicator waits for this, so a rank that exits right after its last operation does not
  // leave a peer waiting for a message that dies with it (its leave notice included).
  virtual void flush(std::function<void()> done) = 0;
  // Ends the receives of operation (comm, seq) still waiting here with dcSystemError and makes sure
  // nothing arriving later is written into their buffers (an operation that failed returns its
  // buffers to the user, who may reuse them at once); a receive whose payload is being written into
  // its buffer ends once that write stopped. Its sends not yet on the wire end too; a send the
  // transport is still reading from ends when it let go of the buffer. The operation waits for
  // both, bounded; past the bound it closes the connection of a receive still landing (close()
  // must stop every write into posted buffers). Later messages of the operation are dropped or refused.
  virtual void cancel(uint64_t comm, uint64_t seq) = 0;
  virtual const char* transport_name() const = 0;
  virtual TransportCounters counters() const = 0;
  // Memory this end of the connection allocated for its transfers (staging segments), in bytes;
  // callable from any thread. Buffers the user registered are not counted.
  virtual size_t held_bytes() const { return 0; }
  // Gives back what held_bytes counts as far as no transfer uses it now, and the transport's idle
  // staging memory (made again by the next transfer needing it): communicator suspend. Returns
  // the bytes released. Engine thread only.
  virtual size_t release_idle_memory() { return 0; }
  // What of this connection outlives it in the engine's pending handlers (its channel, freed once
  // the handlers that a close aborted have run): expired when all of it is freed. Empty where
  // nothing does, or where what remains may be held outside the engine for good (a UCX channel that
  // a failure closed: UCX keeps requests to a dead peer until its worker goes). Engine thread only.
  virtual std::weak_ptr<const void> remains() const { return {}; }
  // Memory shared with the peer process (the shm transport; false/-1 elsewhere). pass_memory hands
  // the peer a sealed memfd of `bytes` under `key` (the caller keeps its own descriptor);
  // receive_memory calls done with the memfd the peer passed under `key`, checked to be sealed and
  // `bytes` long, once it arrived (done owns it), or with -1 when it cannot arrive any more.
  virtual bool pass_memory(uint64_t /*key*/, int /*fd*/, size_t /*bytes*/) { return false; }
  virtual void receive_memory(uint64_t /*key*/, size_t /*bytes*/, std::function<void(int fd)> done) { done(-1); }
};

// Opaque handle of registered memory; transports that need none return an empty handle.
struct MemoryRegistration {
  void* addr = nullptr;
  size_t size = 0;
  std::shared_ptr<void> transport_state;
};

// One rank's end of a transport: it listens, publishes an address, and connects to peers.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  // Opaque string that peers pass to connect(); exchanged through bootstrap.
  virtual std::string address() const = 0;
  // Establishes the connection to `peer` (comm rank) whose Transport published peer_address.
  // The lower rank dials, the higher one accepts; both sides call connect(). `done` runs on the
  // engine thread, with the connection or the error (deadline: timeout_ms).
  using ConnectDone = std::function<void(const Status&, std::shared_ptr<Connection>)>;
  virtual void connect(int peer, const std::string& peer_address, int timeout_ms, ConnectDone done) = 0;
  virtual MemoryRegistration register_memory(void* addr, size_t size) {
    return MemoryRegistration{addr, size, nullptr};
  }
  virtual void deregister_memory(MemoryRegistration&) {}
  // Whether its connections between ranks of one host receive large messages straight into the
  // destination buffer, not through staging (ClusterInputs::receives_in_place; plans read it).
  virtual bool receives_in_place_on_host() const { return false; }
  // What of this transport outlives it in the engine's pending handlers (its listener, shut down
  // by a handler it posts when destroyed): expired when all of it is freed. Empty where nothing
  // does. Engine thread only.
  virtual std::weak_ptr<const void> remains() const { return {}; }
};

struct TransportOptions {
  boost::asio::io_context* io = nullptr;  // the progress engine's
  int rank = 0;
  uint64_t session = 0;  // names the communicator's rendezvous (handshake.h)
  std::string host_id;   // this rank's host identity
  Secret secret;         // every connection proves knowledge of it (handshake.h)
};

std::unique_ptr<Transport> make_tcp_transport(const TransportOptions& options);
std::unique_ptr<Transport> make_shm_transport(const TransportOptions& options);
// UCX (transports/ucx/): throws dc::Error saying why where DeepComm was built without libucx-dev
// or UCX cannot be loaded or started.
std::unique_ptr<Transport> make_ucx_transport(const TransportOptions& options);

}  // namespace dc
