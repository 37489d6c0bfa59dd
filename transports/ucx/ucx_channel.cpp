// Sending, and matching what arrives against posted receives (see ucx_channel.h).
#include "transports/ucx/ucx_channel.h"

#include <cstring>
#include <utility>

#include <boost/asio/post.hpp>

#include "base/log.h"

namespace dc {

namespace {

// A header-only message; UCX reads the header until the send completes.
struct ControlSend {
  UcxHeader header;
  const UcxApi* api;
};

void control_sent(void* request, ucs_status_t, void* user_data) {
  auto* c = static_cast<ControlSend*>(user_data);
  c->api->request_free(request);
  delete c;
}

}  // namespace

struct UcxChannel::SendRef {
  std::shared_ptr<UcxChannel> channel;
  SendPtr op;
  UcxStagingPool::Buffer staging;     // what UCX reads from, unless in place
  UcxRegistrationCache::Lease lease;  // in place: the cached registration UCX uses
};

UcxChannel::UcxChannel(std::shared_ptr<UcxWorker> worker, int peer)
    : worker_(std::move(worker)), api_(worker_->api()), peer_(peer), id_(worker_->attach(this)) {}

UcxChannel::~UcxChannel() {
  worker_->detach(id_);
  if (ep_) worker_->retire(ep_);
}

void UcxChannel::send(const Tag& tag, const void* buf, size_t len, Completion done) {
  UcxEntry entry;
  if (!entry) return;
  if (closed_ || !ep_)
    return post_completion(std::move(done),
                           closed_ ? close_status_ : Status::failure(dcInternalError, "ucx: not connected"), 0);
  auto op = std::make_shared<SendOp>();
  op->serial = ++sends_issued_;
  op->header.type = UcxType::Message;
  op->header.conn = peer_conn_;
  op->header.tag = tag;
  op->header.length = len;
  op->buf = buf;
  op->len = len;
  op->done = std::move(done);
  sending_[op.get()] = op;
  if (eager_credit_.take(len))  // up to kInPlaceEagerMax where the receiver pulls (attach)
    return issue(op, UCP_AM_SEND_FLAG_EAGER);
  op->header.id = next_id_++;
  rendezvous_sends_[op->header.id] = op;
  issue(op, UCP_AM_SEND_FLAG_RNDV);
}

// A send that ends early (its connection closed) cannot be taken back inside UCX 1.13, which may go
// on reading the payload after the caller has its buffer back: so where the receiver does not pull
// the payload itself, UCX sends ordinary memory from a copy owned by the request, freed when UCX
// completes it. Registered memory, and rendezvous payloads of ordinary memory on in-place
// connections, are sent from directly (zero copy: the receiver pulls them, and its late pull of
// memory the caller freed fails in the receiver's transfer, never in this process).
void UcxChannel::issue(const SendPtr& op, unsigned flags) {
  auto* ref = new SendRef{shared_from_this(), op, {}, {}};
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.cb.send = &UcxChannel::on_sent;
  param.user_data = ref;
  param.flags = flags;
  const void* from = op->buf;
  // An eager payload that UCX cannot take at once is copied out later, by the sender's own CPU: a
  // send that ended early would have it read a buffer the caller owns again. So eager payloads of
  // ordinary memory are staged everywhere; rendezvous ones are pulled by the peer where in place.
  const bool rendezvous = flags == UCP_AM_SEND_FLAG_RNDV;
  if (ucp_mem_h memh =
          rendezvous ? in_place_handle(op->buf, op->len, ref->lease) : worker_->memory_handle(op->buf, op->len)) {
    param.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMH;
    param.memh = memh;
  } else if (op->len > 0) {
    ref->staging = worker_->staging(op->len);
    std::memcpy(ref->staging.data(), op->buf, op->len);
    from = ref->staging.data();
  }
  ucs_status_ptr_t request = api_.am_send_nbx(ep_, kUcxAmId, &op->header, sizeof op->header, from, op->len, &param);
  worker_->kick();
  if (request && !UCS_PTR_IS_ERR(request)) return;  // on_sent follows
  delete ref;
  send_done(op, UCS_PTR_STATUS(request));
}

ucp_mem_h UcxChannel::in_place_handle(const void* buf, size_t len, UcxRegistrationCache::Lease& lease) {
  if (ucp_mem_h memh = worker_->memory_handle(buf, len)) return memh;
  if (!in_place_ || len == 0) return nullptr;
  lease = worker_->cached_registration(buf, len);
  return lease ? static_cast<ucp_mem_h>(lease->handle) : nullptr;
}

void UcxChannel::on_sent(void* request, ucs_status_t status, void* user_data) {
  auto* ref = static_cast<SendRef*>(user_data);
  std::shared_ptr<UcxChannel> self = std::move(ref->channel);
  SendPtr op = std::move(ref->op);
  self->worker_->release_lease(std::move(ref->lease));
  delete ref;
  self->api_.request_free(request);
  self->send_done(op, status);
}

void UcxChannel::send_done(const SendPtr& op, ucs_status_t status) {
  sending_.erase(op.get());
  if (op->header.id) rendezvous_sends_.erase(op->header.id);
  if (!flushes_after_sends_.empty())  // not from inside UCX's callback: the request is a send
    boost::asio::post(worker_->io(), [self = shared_from_this()] { self->flush_waiting_sends(); });
  if (status == UCS_OK && op->dropped) return completions_.end_send_dropped(*op);
  if (status == UCS_OK) return finish_send(op, op->refused ? *op->refused : Status::success());
  if (closed_) return finish_send(op, close_status_);
  const Status failure = ucx_failure("sending", status);
  finish_send(op, failure);
  fail_later(failure);
}

void UcxChannel::send_control(UcxType type, uint64_t id, uint32_t flags, const Tag& tag) {
  if (closed_ || !ep_) return;
  auto* c = new ControlSend{UcxHeader{type, flags, peer_conn_, tag, 0, id}, &api_};
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.cb.send = &control_sent;
  param.user_data = c;
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t request = api_.am_send_nbx(ep_, kUcxAmId, &c->header, sizeof c->header, nullptr, 0, &param);
  worker_->kick();
  if (request && !UCS_PTR_IS_ERR(request)) return;
  delete c;
  if (UCS_PTR_IS_ERR(request)) fail_later(ucx_failure("sending a reply", UCS_PTR_STATUS(request)));
}

void UcxChannel::recv(const Tag& tag, void* buf, size_t capacity, Completion done) {
  UcxEntry entry;
  if (!entry) return;
  auto op = std::make_shared<RecvOp>();
  op->tag = tag;
  op->buf = buf;
  op->capacity = capacity;
  op->done = std::move(done);
  auto it = unexpected_.find(tag);
  if (it == unexpected_.end()) {
    // A message of the same operation under another step, sent by a different operation?
    for (const auto& [other, queue] : unexpected_)
      if (signatures_differ(other, tag)) return finish_recv(op, signature_mismatch(other.check), 0);
    if (closed_) return finish_recv(op, close_status_, 0);
    posted_[tag].push_back(op);
    return;
  }
  // An eager message that fully arrived stays receivable after the peer closed.
  Unexpected u = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) unexpected_.erase(it);
  if (u.rendezvous) return match_rendezvous(op, u.header, u.rendezvous);
  deliver_eager(op, u.header, u.eager.data());
}

ucs_status_t UcxChannel::on_message(const UcxHeader& h, void* data, size_t length, bool rendezvous) {
  switch (h.type) {
    case UcxType::Credit:
      if (!eager_credit_.returned(h.id)) {
        fail_later(Status::failure(dcInternalError, "ucx connection to rank " + std::to_string(peer_) +
                                                        ": protocol error: more credit returned than used"));
      }
      return UCS_OK;
    case UcxType::Reject: on_refused(h); return UCS_OK;
    case UcxType::RejectAck: on_refusal_seen(h.id); return UCS_OK;
    case UcxType::FlushRequest: send_control(UcxType::FlushAck, h.id); return UCS_OK;
    case UcxType::FlushAck: on_flush_ack(h.id); return UCS_OK;
    case UcxType::Message: break;
    default:
      fail_later(Status::failure(dcInternalError, "ucx connection to rank " + std::to_string(peer_) +
                                                      ": protocol error: unknown message type"));
      return UCS_OK;
  }
  if (h.length != length || (rendezvous && !h.id)) {
    fail_later(
        Status::failure(dcInternalError, "ucx connection to rank " + std::to_string(peer_) +
                                             ": protocol error: message length or kind differs from its header"));
    return UCS_OK;
  }
  if (!rendezvous) {
    on_eager(h, data);
    return UCS_OK;
  }
  on_rendezvous(h, data);
  return UCS_INPROGRESS;  // the descriptor is kept, received or refused
}

void UcxChannel::on_eager(const UcxHeader& h, const void* data) {
  // Sent on eager credit (a rendezvous id means it was not): within the window, or the sender
  // ignores flow control.
  if (!h.id && !eager_credit_.arrived(h.length)) {
    fail_later(Status::failure(dcInternalError, "ucx connection to rank " + std::to_string(peer_) +
                                                    ": protocol error: eager data beyond the credit window"));
    return;
  }
  if (RecvPtr op = pop_posted(h.tag)) return deliver_eager(op, h, data);
  if (cancelled_ops_.contains(h.tag)) {
    if (!h.id) return_credit(h.length);  // its operation was cancelled here: nobody will take it
    return;
  }
  fail_mismatched_receives(h.tag);
  const char* bytes = static_cast<const char*>(data);
  unexpected_[h.tag].push_back(Unexpected{h, std::vector<char>(bytes, bytes + h.length), nullptr});
}

void UcxChannel::on_rendezvous(const UcxHeader& h, void* desc) {
  if (RecvPtr op = pop_posted(h.tag)) return match_rendezvous(op, h, desc);
  if (cancelled_ops_.contains(h.tag)) return refuse(h, desc, kUcxCancelled, h.tag);
  fail_mismatched_receives(h.tag);
  unexpected_[h.tag].push_back(Unexpected{h, {}, desc});
}

// An unmatched message of an operation whose posted receives carry another signature: the ranks
// called different operations. Those receives fail.
void UcxChannel::fail_mismatched_receives(const Tag& arrived) {
  for (auto it = posted_.begin(); it != posted_.end();) {
    if (!signatures_differ(it->first, arrived)) {
      ++it;
      continue;
    }
    for (auto& op : it->second) finish_recv(op, signature_mismatch(arrived.check), 0);
    it = posted_.erase(it);
  }
}

void UcxChannel::deliver_eager(const RecvPtr& op, const UcxHeader& h, const void* payload) {
  if (!h.id) return_credit(h.length);  // sent on eager credit (a rendezvous id means it was not)
  const Status status = land_eager(*op, h.tag, h.length, payload);
  finish_recv(op, status, status.ok() ? h.length : 0);
}

void UcxChannel::return_credit(size_t len) {
  if (const size_t credit = eager_credit_.consumed(len)) send_control(UcxType::Credit, credit);
}

UcxChannel::RecvPtr UcxChannel::pop_posted(const Tag& tag) { return take_posted(posted_, tag); }

void UcxChannel::finish_send(const SendPtr& op, const Status& status) { completions_.end_send(*op, status); }

void UcxChannel::finish_recv(const RecvPtr& op, const Status& status, size_t bytes) {
  completions_.end_recv(*op, status, bytes);
}

void UcxChannel::post_completion(Completion done, const Status& status, size_t bytes) {
  completions_.post(std::move(done), status, bytes);
}

}  // namespace dc
