// One UCX connection: DeepComm's tag matching over UCP active messages (UCP's own tag matching is
// per worker and can carry neither the contract's tag nor the communicator). A send of up to
// kEagerMax bytes (kInPlaceEagerMax on a connection that moves ordinary memory in place) goes
// eagerly while the sender holds eager credit (kEagerWindow unacknowledged bytes, returned by
// Credit messages as the receiver consumes them), so what waits unexpected here is bounded;
// everything else goes by UCX's rendezvous, whose payload stays with the sender until
// a receive takes it (ucp_am_recv_data_nbx) or refuses it (Reject, answered by RejectAck, then the
// descriptor is released: the sender learns the refusal before its send completes).
//
// Beside the endpoint, a control socket to the peer (TCP, on the interface DeepComm selects)
// carries nothing after its hello: its end is the peer's death signal, as a socket's EOF is on the
// other transports (UCX itself notices a dead peer over shared memory only by keepalive). Data and
// that signal travel apart, so a flush ends only when nothing sent before it can be lost with this
// process: every earlier send completed (a rendezvous payload leaves when the peer takes it), then
// the peer acknowledged a FlushRequest sent behind them (UCP delivers an endpoint's active
// messages in order), so it has every earlier message before it can see the control socket end.
// Engine thread only; completions are posted, never called inside send()/recv().
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include <boost/asio/generic/stream_protocol.hpp>

#include "transports/common/cancelled_ops.h"
#include "transports/common/eager_credit.h"
#include "transports/common/op_completions.h"
#include "transports/transport.h"
#include "transports/ucx/ucx_wire.h"
#include "transports/ucx/ucx_worker.h"

namespace dc {

class UcxChannel : public std::enable_shared_from_this<UcxChannel> {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;
  static constexpr size_t kEagerMax = EagerCredit::kEagerMax;
  static constexpr size_t kEagerWindow = EagerCredit::kEagerWindow;
  // Where the receiver pulls a rendezvous payload into place (one copy, by cross-memory attach or
  // an RDMA read), a payload longer than two segments of UCX's shared-memory transport (8 KiB each
  // by default) goes by rendezvous: eagerly it took a copy into staging, fragments through UCX's
  // segments and a copy out (a 256 KiB all-reduce at 4 ranks over UCX_TLS=sm, pieces of 64 KiB,
  // took 1.5x as long). Up to two segments the eager copies cost less than the rendezvous' round
  // trip (a 12 KiB all-reduce at 4 ranks took 0.72 of the time; docs/performance.md).
  static constexpr size_t kInPlaceEagerMax = 16 * 1024;

  UcxChannel(std::shared_ptr<UcxWorker> worker, int peer);
  ~UcxChannel();
  UcxChannel(const UcxChannel&) = delete;
  UcxChannel& operator=(const UcxChannel&) = delete;

  // Receives its messages from now on (before the peer learns the id).
  uint64_t id() const { return id_; }
  // Set-up done: the endpoint to the peer, the peer's connection id and the control socket.
  // in_place: ordinary memory is sent from and received into the caller's buffer (ucx_policy.h).
  void attach(ucp_ep_h ep, uint64_t peer_conn, Socket control, bool in_place);

  void send(const Tag& tag, const void* buf, size_t len, Completion done);
  void recv(const Tag& tag, void* buf, size_t capacity, Completion done);
  void close(const Status& status);
  bool closed() const { return closed_; }
  void flush(std::function<void()> done);
  void cancel(uint64_t comm, uint64_t seq);
  TransportCounters counters() const { return completions_.counters(); }
  // The worker's idle staging buffers (shared by every UCX connection of the process).
  size_t release_idle_memory() { return worker_->release_staging(); }

  // From the worker, inside UCX's progress (no UCX progress or endpoint close from here).
  ucs_status_t on_message(const UcxHeader& h, void* data, size_t length, bool rendezvous);
  void on_endpoint_error(ucs_status_t status);
  ucp_ep_h endpoint() const { return ep_; }

 private:
  struct SendOp {
    uint64_t serial = 0;  // this connection's sends, from 1, in issue order
    UcxHeader header;     // UCX reads it until the send completes
    const void* buf = nullptr;
    size_t len = 0;
    Completion done;
    std::optional<Status> refused;  // the receiver's Reject
    bool dropped = false;           // refused as cancelled: ends without error, no bytes counted
  };
  struct RecvOp {
    Tag tag;
    void* buf = nullptr;
    size_t capacity = 0;
    size_t expected = 0;
    Completion done;
    bool in_ucx = false;   // a rendezvous payload is being received for it
    bool direct = false;   // ... straight into buf (registered or in place), not into staging
    bool discard = false;  // cancelled while in_ucx: its payload goes nowhere
  };
  using SendPtr = std::shared_ptr<SendOp>;
  using RecvPtr = std::shared_ptr<RecvOp>;
  struct Unexpected {
    UcxHeader header;
    std::vector<char> eager;     // an eager payload, copied
    void* rendezvous = nullptr;  // or UCX's descriptor of a rendezvous payload
  };
  struct SendRef;
  struct RecvRef;

  // ucx_channel.cpp: sending and matching.
  // The memory handle of an in-place transfer of [buf, buf + len): registered memory's, or on a
  // connection that moves ordinary memory in place the cache's (kept while `lease` lives).
  // nullptr: staged.
  ucp_mem_h in_place_handle(const void* buf, size_t len, UcxRegistrationCache::Lease& lease);
  void issue(const SendPtr& op, unsigned flags);
  static void on_sent(void* request, ucs_status_t status, void* user_data);
  void send_done(const SendPtr& op, ucs_status_t status);
  void send_control(UcxType type, uint64_t id, uint32_t flags = 0, const Tag& tag = {});
  void on_eager(const UcxHeader& h, const void* data);
  void on_rendezvous(const UcxHeader& h, void* desc);
  void deliver_eager(const RecvPtr& op, const UcxHeader& h, const void* payload);
  void return_credit(size_t len);
  RecvPtr pop_posted(const Tag& tag);
  void fail_mismatched_receives(const Tag& arrived);
  void finish_send(const SendPtr& op, const Status& status);
  void finish_recv(const RecvPtr& op, const Status& status, size_t bytes);
  void post_completion(Completion done, const Status& status, size_t bytes);

  // ucx_rendezvous.cpp: rendezvous receives, refusals, cancellation.
  void match_rendezvous(const RecvPtr& op, const UcxHeader& h, void* desc);
  void receive_rendezvous(const RecvPtr& op, size_t len, void* desc);
  static void on_received(void* request, ucs_status_t status, size_t length, void* user_data);
  // Copies a staged payload into its receive's buffer if the receive still waits for it.
  static void land(const RecvRef& ref, ucs_status_t status);
  void rendezvous_done(const RecvPtr& op, ucs_status_t status);
  void refuse(const UcxHeader& h, void* desc, uint32_t flags, const Tag& own);
  void on_refused(const UcxHeader& h);
  void on_refusal_seen(uint64_t id);

  // ucx_channel_life.cpp: the control socket, errors, flush, close.
  bool sent_up_to(uint64_t serial) const;  // every send up to serial completed
  void flush_waiting_sends();              // asks the peer for the flushes whose sends completed
  void request_flush_ack(std::function<void()> done);
  void on_flush_ack(uint64_t id);
  void watch_control();
  void peer_gone(const boost::system::error_code& ec);
  void fail_later(const Status& status);
  Status ucx_failure(const char* what, ucs_status_t status) const;

  std::shared_ptr<UcxWorker> worker_;
  const UcxApi& api_;
  int peer_;
  uint64_t id_;
  uint64_t peer_conn_ = 0;
  ucp_ep_h ep_ = nullptr;
  std::unique_ptr<Socket> control_;
  char control_byte_ = 0;
  bool closed_ = false;
  bool in_place_ = false;
  Status close_status_;

  std::unordered_map<Tag, std::deque<RecvPtr>, TagHash> posted_;
  std::unordered_map<Tag, std::deque<Unexpected>, TagHash> unexpected_;
  std::unordered_map<const SendOp*, SendPtr> sending_;                      // every send UCX has not completed
  std::unordered_map<uint64_t, SendPtr> rendezvous_sends_;                  // the rendezvous ones, by id
  std::vector<RecvPtr> rendezvous_recvs_;                                   // payloads being received
  std::unordered_map<uint64_t, std::function<void()>> awaiting_flush_ack_;  // by FlushRequest id
  struct FlushAfterSends {
    uint64_t last_send;  // the flush waits for the sends up to this serial
    std::function<void()> done;
  };
  std::vector<FlushAfterSends> flushes_after_sends_;
  uint64_t sends_issued_ = 0;
  std::unordered_map<uint64_t, void*> refused_;  // refused descriptors awaiting RejectAck
  CancelledOps cancelled_ops_;                   // their late messages are dropped (eager) or refused (rendezvous)
  uint64_t next_id_ = 1;

  EagerCredit eager_credit_{sizeof(UcxHeader)};

  OpCompletions completions_{worker_->io()};
};

}  // namespace dc
