// A UCX connection's life: set-up, the control socket whose end means the peer is gone, endpoint
// errors, flush and close.
#include <algorithm>

#include <boost/asio/post.hpp>

#include "base/log.h"
#include "transports/ucx/ucx_channel.h"

namespace dc {

void UcxChannel::attach(ucp_ep_h ep, uint64_t peer_conn, Socket control, bool in_place) {
  ep_ = ep;
  in_place_ = in_place;
  if (in_place) eager_credit_.limit_to(kInPlaceEagerMax);
  peer_conn_ = peer_conn;
  control_ = std::make_unique<Socket>(std::move(control));
  watch_control();
}

// The peer never writes on the control socket after its hello: any completion of this read is its
// end (EOF when the peer closed or died) or a protocol error.
// The read holds no reference: a channel nobody uses any more goes, and its socket with it.
void UcxChannel::watch_control() {
  control_->async_read_some(boost::asio::buffer(&control_byte_, 1),
                            [weak = weak_from_this()](const boost::system::error_code& ec, size_t) {
                              if (auto self = weak.lock()) self->peer_gone(ec);
                            });
}

void UcxChannel::peer_gone(const boost::system::error_code& ec) {
  UcxEntry entry;
  if (!entry) return;
  if (closed_) return;
  // Whatever the peer sent before it went is delivered first (a rank may send its last message,
  // or a notice saying why it fails, and exit).
  worker_->drain();
  if (closed_) return;
  const std::string why = ec ? "its control socket ended (" + ec.message() + ")" : "it wrote on the control socket";
  close(Status::failure(ec ? dcRemoteError : dcInternalError,
                        "ucx connection to rank " + std::to_string(peer_) + ": peer closed the connection: " + why));
}

void UcxChannel::on_endpoint_error(ucs_status_t status) {
  fail_later(Status::failure(dcRemoteError, "ucx connection to rank " + std::to_string(peer_) +
                                                ": endpoint failed: " + api_.status_string(status)));
}

// Closing touches the endpoint, which UCX does not allow from inside its own callbacks.
void UcxChannel::fail_later(const Status& status) {
  boost::asio::post(worker_->io(), [self = shared_from_this(), status] { self->close(status); });
}

Status UcxChannel::ucx_failure(const char* what, ucs_status_t status) const {
  const bool peer_side = status == UCS_ERR_CONNECTION_RESET || status == UCS_ERR_ENDPOINT_TIMEOUT ||
                         status == UCS_ERR_UNREACHABLE || status == UCS_ERR_CANCELED;
  return Status::failure(
      peer_side ? dcRemoteError : dcSystemError,
      "ucx connection to rank " + std::to_string(peer_) + ": " + what + " failed: " + api_.status_string(status));
}

void UcxChannel::flush(std::function<void()> done) {
  UcxEntry entry;
  if (!entry) return;
  if (closed_ || !ep_) return boost::asio::post(worker_->io(), std::move(done));
  if (sent_up_to(sends_issued_)) return request_flush_ack(std::move(done));
  flushes_after_sends_.push_back(FlushAfterSends{sends_issued_, std::move(done)});
}

bool UcxChannel::sent_up_to(uint64_t serial) const {
  return std::none_of(sending_.begin(), sending_.end(), [serial](const auto& s) { return s.second->serial <= serial; });
}

void UcxChannel::flush_waiting_sends() {
  UcxEntry entry;
  if (!entry || closed_) return;
  std::vector<std::function<void()>> ready;
  auto& waiting = flushes_after_sends_;
  for (auto it = waiting.begin(); it != waiting.end();) {
    if (!sent_up_to(it->last_send)) {
      ++it;
      continue;
    }
    ready.push_back(std::move(it->done));
    it = waiting.erase(it);
  }
  for (auto& done : ready) request_flush_ack(std::move(done));
}

void UcxChannel::request_flush_ack(std::function<void()> done) {
  if (closed_ || !ep_) return boost::asio::post(worker_->io(), std::move(done));
  const uint64_t id = next_id_++;
  awaiting_flush_ack_.emplace(id, std::move(done));
  send_control(UcxType::FlushRequest, id);  // a failed send closes the connection, which answers
}

void UcxChannel::on_flush_ack(uint64_t id) {
  auto it = awaiting_flush_ack_.find(id);
  if (it == awaiting_flush_ack_.end()) {
    fail_later(Status::failure(dcInternalError, "ucx connection to rank " + std::to_string(peer_) +
                                                    ": protocol error: an acknowledgement of no flush"));
    return;
  }
  boost::asio::post(worker_->io(), std::move(it->second));
  awaiting_flush_ack_.erase(it);
}

void UcxChannel::close(const Status& status) {
  UcxEntry entry;
  if (!entry) return;
  if (closed_) return;
  closed_ = true;
  close_status_ = status;
  worker_->detach(id_);
  for (auto& [tag, ops] : posted_)
    for (auto& op : ops) finish_recv(op, status, 0);
  posted_.clear();
  if (ep_) worker_->retire(std::exchange(ep_, nullptr));
  // Operations still inside UCX end here: in peer-failure mode the forced close cancels them, but
  // without it (UCX's shared memory) UCX would hold them forever, and over its tcp transport it
  // may go on moving them when a stalled peer resumes. A staged send goes on from its copy and a
  // staged receive into its staging alone (land() skips an ended receive); direct ones use
  // registered memory (RDMA's zero copy; the known gap). UCX's late completions find them ended.
  for (auto& [key, op] : std::exchange(sending_, {})) finish_send(op, status);
  rendezvous_sends_.clear();
  for (const RecvPtr& op : std::exchange(rendezvous_recvs_, {})) {
    op->in_ucx = false;
    finish_recv(op, status, 0);
  }
  for (auto& [id, done] : std::exchange(awaiting_flush_ack_, {})) boost::asio::post(worker_->io(), std::move(done));
  for (auto& waiting : std::exchange(flushes_after_sends_, {}))
    boost::asio::post(worker_->io(), std::move(waiting.done));
  // Announced rendezvous messages can no longer be fetched; arrived eager ones still can.
  for (auto it = unexpected_.begin(); it != unexpected_.end();) {
    auto& queue = it->second;
    for (const Unexpected& u : queue)
      if (u.rendezvous) api_.am_data_release(worker_->handle(), u.rendezvous);
    queue.erase(std::remove_if(queue.begin(), queue.end(), [](const Unexpected& u) { return u.rendezvous != nullptr; }),
                queue.end());
    it = queue.empty() ? unexpected_.erase(it) : std::next(it);
  }
  for (auto& [id, desc] : refused_) api_.am_data_release(worker_->handle(), desc);
  refused_.clear();
  if (control_) {
    boost::system::error_code ignored;
    control_->shutdown(Socket::shutdown_both, ignored);
    control_->close(ignored);
  }
}

}  // namespace dc
