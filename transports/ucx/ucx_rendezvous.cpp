// Rendezvous messages on a UCX connection: receiving their payload, refusing them (too long,
// another operation's, or a cancelled one's), and cancelling an operation's receives and the
// messages already sent for it. A payload UCX is already receiving cannot be stopped inside UCX
// 1.13, not even by closing the endpoint: over its tcp transport (a put: the sender pushes into
// the receiver's addresses) a sender that stalls mid-message and resumes later still delivers the
// rest. So on connections where the sender pushes, payloads into ordinary memory land in staging
// owned by the UCX request and are copied into the posted buffer once complete; a cancelled receive
// returns its buffer at once and the rest of its payload goes into the staging alone. Where the
// receiver pulls (cross-memory attach, RDMA reads: ucx_policy.h), and for registered memory
// (dcMemAlloc, dcCommRegister), the payload is received in place; cancel() then returns once UCX
// let go of the buffer (progressing the worker meanwhile, bounded; past the bound the endpoint is
// closed).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include "base/log.h"
#include "transports/ucx/ucx_channel.h"

namespace dc {

namespace {

constexpr auto kCancelWait = std::chrono::milliseconds(5000);
constexpr auto kForcedCloseWait = std::chrono::milliseconds(1000);

}  // namespace

struct UcxChannel::RecvRef {
  std::shared_ptr<UcxChannel> channel;
  RecvPtr op;
  UcxStagingPool::Buffer staging;     // what UCX writes into, unless op->direct
  UcxRegistrationCache::Lease lease;  // in place: the cached registration UCX uses
};

void UcxChannel::match_rendezvous(const RecvPtr& op, const UcxHeader& h, void* desc) {
  const bool mismatch = signatures_differ(op->tag, h.tag);
  if (mismatch || h.length > op->capacity) {
    finish_recv(op, mismatch ? signature_mismatch(h.tag.check) : message_too_long(h.length, op->capacity), 0);
    return refuse(h, desc, mismatch ? uint32_t{kUcxMismatch} : 0u, op->tag);
  }
  receive_rendezvous(op, h.length, desc);
}

void UcxChannel::receive_rendezvous(const RecvPtr& op, size_t len, void* desc) {
  op->expected = len;
  op->in_ucx = true;
  rendezvous_recvs_.push_back(op);
  auto* ref = new RecvRef{shared_from_this(), op, {}, {}};
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  param.cb.recv_am = &UcxChannel::on_received;
  param.user_data = ref;
  void* into = op->buf;
  if (ucp_mem_h memh = in_place_handle(op->buf, len, ref->lease)) {
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
    param.memh = memh;
    op->direct = true;
  } else {
    ref->staging = worker_->staging(len);
    into = ref->staging.data();
  }
  ucs_status_ptr_t request = api_.am_recv_data_nbx(worker_->handle(), desc, into, len, &param);
  worker_->kick();
  if (request && !UCS_PTR_IS_ERR(request)) return;  // on_received follows
  land(*ref, UCS_PTR_STATUS(request));
  delete ref;
  rendezvous_done(op, UCS_PTR_STATUS(request));
}

void UcxChannel::land(const RecvRef& ref, ucs_status_t status) {
  // Only into a receive still waiting for it: a cancelled or closed one gave its buffer back.
  const RecvOp& op = *ref.op;
  if (ref.staging && status == UCS_OK && op.in_ucx && !op.discard) std::memcpy(op.buf, ref.staging.data(), op.expected);
}

void UcxChannel::on_received(void* request, ucs_status_t status, size_t, void* user_data) {
  auto* ref = static_cast<RecvRef*>(user_data);
  land(*ref, status);
  std::shared_ptr<UcxChannel> self = std::move(ref->channel);
  RecvPtr op = std::move(ref->op);
  self->worker_->release_lease(std::move(ref->lease));
  delete ref;
  self->api_.request_free(request);
  self->rendezvous_done(op, status);
}

void UcxChannel::rendezvous_done(const RecvPtr& op, ucs_status_t status) {
  op->in_ucx = false;  // (close() may have ended it already: then finish_recv does nothing)
  rendezvous_recvs_.erase(std::remove(rendezvous_recvs_.begin(), rendezvous_recvs_.end(), op), rendezvous_recvs_.end());
  if (op->discard) return finish_recv(op, receive_cancelled(), 0);
  if (status == UCS_OK) return finish_recv(op, Status::success(), op->expected);
  if (closed_) return finish_recv(op, close_status_, 0);
  const Status failure = ucx_failure("receiving", status);
  finish_recv(op, failure, 0);
  fail_later(failure);
}

// The sender must learn of the refusal before its send completes, and its send completes when the
// descriptor is released: so Reject first, and the release once the sender acknowledged it.
void UcxChannel::refuse(const UcxHeader& h, void* desc, uint32_t flags, const Tag& own) {
  refused_[h.id] = desc;
  send_control(UcxType::Reject, h.id, flags, own);  // own.check: this side's signature
}

void UcxChannel::on_refused(const UcxHeader& h) {
  auto it = rendezvous_sends_.find(h.id);
  if (it == rendezvous_sends_.end()) {
    DC_WARN("ucx connection to rank %d: a refusal of an unknown send", peer_);
    return;
  }
  if (h.flags & kUcxCancelled) it->second->dropped = true;
  else if (h.flags & kUcxMismatch) it->second->refused = signature_mismatch(h.tag.check);
  else it->second->refused = Status::failure(dcInvalidUsage, "the receiver's buffer is smaller than the message");
  send_control(UcxType::RejectAck, h.id);
}

void UcxChannel::on_refusal_seen(uint64_t id) {
  auto it = refused_.find(id);
  if (it == refused_.end()) return;
  api_.am_data_release(worker_->handle(), it->second);
  refused_.erase(it);
}

void UcxChannel::cancel(uint64_t comm, uint64_t seq) {
  UcxEntry entry;
  if (!entry) return;
  auto of_operation = [&](const Tag& t) { return t.comm == comm && t.seq == seq; };
  cancelled_ops_.remember(comm, seq);
  // What the peer already sent for it and nobody will take: eager payloads go (their credit back),
  // rendezvous messages are refused so that the sender's send ends.
  take_queued_of_operation(unexpected_, comm, seq, [this](const Unexpected& u) {
    if (u.rendezvous) refuse(u.header, u.rendezvous, kUcxCancelled, u.header.tag);
    else if (!u.header.id) return_credit(u.header.length);
  });
  take_queued_of_operation(posted_, comm, seq, [this](const RecvPtr& op) { finish_recv(op, receive_cancelled(), 0); });
  // A staged payload goes on into its staging alone, so its receive ends now; a direct one holds
  // the buffer until UCX lets go of it.
  std::vector<RecvPtr> landing, staged;
  for (const RecvPtr& op : rendezvous_recvs_) {
    if (!of_operation(op->tag)) continue;
    op->discard = true;
    (op->direct ? landing : staged).push_back(op);
  }
  for (const RecvPtr& op : staged) finish_recv(op, receive_cancelled(), 0);
  if (landing.empty()) return;
  auto landed = [&landing] {
    return std::none_of(landing.begin(), landing.end(), [](const RecvPtr& op) { return op->in_ucx; });
  };
  if (worker_->progress_until(landed, kCancelWait)) return;
  close(Status::failure(dcSystemError, "ucx connection to rank " + std::to_string(peer_) +
                                           ": a cancelled transfer did not end; connection closed"));
  if (!worker_->progress_until(landed, kForcedCloseWait))
    DC_WARN("ucx connection to rank %d: UCX still holds a cancelled receive's buffer", peer_);
}

}  // namespace dc
