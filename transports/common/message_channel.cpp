#include "transports/common/message_channel.h"

#include <algorithm>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>

#include "base/log.h"

namespace dc {

namespace {

// One async_write carries at most this many queued frames / payload bytes. The byte bound is one
// Data frame's: an answer queued while a batch is written waits for at most that much payload.
constexpr size_t kMaxBatchFrames = 64;
constexpr size_t kMaxBatchBytes = MessageChannel::kDataFrameBytes;

// Answers to the peer's messages (clear-to-send, returned credit) carry no message of their own,
// so they overtake queued payload: the peer's transfers then never wait behind this side's.
bool is_answer(const FrameHeader& h) { return h.type == FrameType::Cts || h.type == FrameType::Credit; }

}  // namespace

MessageChannel::MessageChannel(boost::asio::io_context& io, std::unique_ptr<FrameStream> stream, int peer,
                               const char* transport_name)
    : io_(io), stream_(std::move(stream)), peer_(peer), transport_name_(transport_name) {}

void MessageChannel::start() { read_header(); }

void MessageChannel::send(const Tag& tag, const void* buf, size_t len, Completion done) {
  if (closed_) return post_completion(std::move(done), close_status_, 0);
  auto op = std::make_shared<SendOp>(SendOp{tag, buf, len, std::move(done)});
  FrameHeader h;
  h.tag = tag;
  h.length = len;
  if (eager_credit_.take(len)) {
    h.type = FrameType::Eager;
    enqueue(h, buf, len, [this, op](const Status& s) { finish_send(op, s); });
    return;
  }
  h.type = FrameType::Rts;
  h.id = next_id_++;
  h.aux = reinterpret_cast<uintptr_t>(buf);
  describe_rendezvous(h, buf, len);
  rendezvous_sends_[h.id] = op;
  enqueue(h, nullptr, 0);
}

void MessageChannel::recv(const Tag& tag, void* buf, size_t capacity, Completion done, PieceSink sink) {
  auto it = unexpected_.find(tag);
  if (it == unexpected_.end()) {
    // A message of the same operation under another step, sent by a different operation?
    for (const auto& [other, queue] : unexpected_)
      if (signatures_differ(other, tag)) return post_completion(std::move(done), signature_mismatch(other.check), 0);
    if (closed_) return post_completion(std::move(done), close_status_, 0);
    posted_[tag].push_back(
        std::make_shared<RecvOp>(RecvOp{tag, buf, capacity, 0, 0, std::move(done), false, std::move(sink)}));
    return;
  }
  // An eager message that fully arrived stays receivable after the peer closed: a rank may send
  // its last message and exit before this rank posts the matching receive.
  auto op = std::make_shared<RecvOp>(RecvOp{tag, buf, capacity, 0, 0, std::move(done), false, std::move(sink)});
  Unexpected u = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) unexpected_.erase(it);
  if (u.header.type == FrameType::Rts) --unexpected_rts_;
  if (u.header.type == FrameType::Eager) {
    deliver_eager(op, u.header, u.payload.data());
  } else {
    match_rts(op, u.header);
  }
}

void MessageChannel::close(const Status& status) {
  if (closed_) return;
  closed_ = true;
  close_status_ = status;
  stream_->close();
  // The in-flight batch is failed here too; its handler then finds nothing left to call.
  for (auto& o : writing_) {
    if (o.written) std::exchange(o.written, nullptr)(status);
  }
  auto queued = std::move(write_queue_);
  write_queue_.clear();
  for (auto& o : queued) {
    if (o.written) o.written(status);
  }
  for (auto& [tag, ops] : posted_) {
    for (auto& op : ops) finish_recv(op, status, 0);
  }
  posted_.clear();
  for (auto& [id, op] : rendezvous_sends_) finish_send(op, status);
  rendezvous_sends_.clear();
  for (auto& [id, op] : rendezvous_recvs_) finish_recv(op, status, 0);
  rendezvous_recvs_.clear();
  if (eager_in_flight_) finish_recv(std::exchange(eager_in_flight_, nullptr), status, 0);
  // Announced rendezvous messages can no longer be fetched; arrived eager ones still can.
  for (auto it = unexpected_.begin(); it != unexpected_.end();) {
    auto& queue = it->second;
    queue.erase(std::remove_if(queue.begin(), queue.end(),
                               [](const Unexpected& u) { return u.header.type != FrameType::Eager; }),
                queue.end());
    it = queue.empty() ? unexpected_.erase(it) : std::next(it);
  }
  unexpected_rts_ = 0;
  on_closed();
  notify_flushed();
}

void MessageChannel::flush(std::function<void()> done) {
  flush_waiters_.push_back(std::move(done));
  notify_flushed();
}

void MessageChannel::refuse_rts(const FrameHeader& rts, const Tag& tag, uint32_t flags) {
  FrameHeader h;
  h.type = FrameType::Cts;
  h.tag = tag;
  h.id = rts.id;
  h.flags = flags;
  enqueue(h, nullptr, 0);
}

void MessageChannel::cancel(uint64_t comm, uint64_t seq) {
  auto of_operation = [&](const Tag& t) { return t.comm == comm && t.seq == seq; };
  cancelled_ops_.remember(comm, seq);
  // What the peer already sent for it and nobody will take: eager payloads go (their credit back),
  // announcements are refused so that the sender's rendezvous ends.
  take_queued_of_operation(unexpected_, comm, seq, [this](const Unexpected& u) {
    if (u.header.type == FrameType::Eager) {
      return_credit(u.header.length);
    } else {
      --unexpected_rts_;
      refuse_rts(u.header, u.header.tag, kFrameCancelled);
    }
  });
  take_queued_of_operation(posted_, comm, seq, [this](const RecvPtr& op) { finish_recv(op, receive_cancelled(), 0); });
  if (eager_in_flight_ && of_operation(eager_in_flight_->tag)) eager_in_flight_->discard = true;
  // Its sends: frames not yet on the wire are dropped (an eager one gives its credit back), and so
  // are announced rendezvous sends whose payload the peer cannot reach yet; a frame being written
  // ends when written. The operation keeps its buffers until every send ended.
  for (auto it = write_queue_.begin(); it != write_queue_.end();) {
    const FrameHeader& h = it->header;
    const bool payload_frame = h.type == FrameType::Eager || h.type == FrameType::Data || h.type == FrameType::Rts;
    if (!payload_frame || !of_operation(h.tag) || it->fd) {
      ++it;
      continue;
    }
    if (h.type == FrameType::Eager) eager_credit_.untake(h.length);
    if (h.type == FrameType::Rts) {
      if (SendPtr op = take_rendezvous_send(h.id)) finish_send(op, receive_cancelled());
    }
    if (it->written) it->written(receive_cancelled());
    it = write_queue_.erase(it);
  }
  if (rendezvous_send_droppable()) {
    for (auto it = rendezvous_sends_.begin(); it != rendezvous_sends_.end();) {
      if (!of_operation(it->second->tag)) {
        ++it;
        continue;
      }
      finish_send(it->second, receive_cancelled());
      cancelled_sends_.insert(it->first);
      it = rendezvous_sends_.erase(it);
    }
  }
  notify_flushed();
  for (auto& [id, op] : rendezvous_recvs_) {
    if (!of_operation(op->tag)) continue;
    op->discard = true;
    // A piece being read into the buffer ends first: the receive reports only after it.
    if (!op->reading) finish_recv(op, receive_cancelled(), 0);
  }
}

void MessageChannel::notify_flushed() {
  if (!closed_ && (!writing_.empty() || !write_queue_.empty())) return;
  for (auto& waiter : std::exchange(flush_waiters_, {})) boost::asio::post(io_, std::move(waiter));
}

void MessageChannel::read_header() {
  if (closed_) return;
  auto self = shared_from_this();
  stream_->read(&in_, sizeof in_, [this, self](const boost::system::error_code& ec) {
    if (closed_) return;
    if (ec) return fail_from_error(ec, "reading a frame");
    on_header();
  });
}

void MessageChannel::on_header() {
  switch (in_.type) {
    case FrameType::Eager: return on_eager();
    case FrameType::Rts:
      on_rts();
      if (closed_) return;
      return read_header();
    case FrameType::Cts: {
      SendPtr op = take_rendezvous_send(in_.id);
      if (!op && cancelled_sends_.erase(in_.id)) return read_header();  // cancelled: no payload follows
      if (!op) return protocol_error("CTS for an unknown send");
      if (in_.flags & kFrameMismatch) {
        finish_send(op, signature_mismatch(in_.tag.check));
      } else if (in_.flags & kFrameCancelled) {
        // The receiver's operation failed and dropped the message; this rank's own result never
        // depends on what it sends.
        completions_.end_send_dropped(*op);
      } else if (in_.flags & kFrameRejected) {
        finish_send(op, Status::failure(dcInvalidUsage, "the receiver's buffer is smaller than the message"));
      } else {
        clear_to_send(op, in_);
      }
      return read_header();
    }
    case FrameType::Data: return on_data();
    case FrameType::Credit:
      if (!eager_credit_.returned(in_.length)) return protocol_error("more credit returned than used");
      return read_header();
    default:
      if (!handle_extra_frame(in_)) return protocol_error("unknown frame type");
      return read_header();
  }
}

void MessageChannel::on_eager() {
  const FrameHeader h = in_;
  if (h.length > kEagerMax) return protocol_error("eager frame longer than the eager limit");
  if (!eager_credit_.arrived(h.length)) return protocol_error("eager data beyond the credit window");
  RecvPtr op = pop_posted(h.tag);
  // Until its payload is read, the matched receive is in no queue: remember it, so that the
  // connection closing or the operation being cancelled meanwhile still ends it.
  eager_in_flight_ = op;
  if (op && h.length <= op->capacity && !signatures_differ(op->tag, h.tag)) {
    // Straight into the posted buffer.
    return read_payload(op->buf, h.length, [this, op, h] {
      eager_in_flight_ = nullptr;
      return_credit(h.length);
      if (op->discard) finish_recv(op, receive_cancelled(), 0);  // reported once nothing more lands in buf
      else finish_recv(op, Status::success(), h.length);
      read_header();
    });
  }
  // Buffered: unexpected, or too long for the posted buffer (read off the wire, then dropped).
  auto payload = std::make_shared<std::vector<char>>(h.length);
  read_payload(payload->data(), h.length, [this, op, h, payload] {
    eager_in_flight_ = nullptr;
    RecvPtr target = op ? op : pop_posted(h.tag);  // a receive may have been posted meanwhile
    if (target && target->discard) {
      return_credit(h.length);
      finish_recv(target, receive_cancelled(), 0);
    } else if (target) {
      deliver_eager(target, h, payload->data());
    } else if (cancelled_ops_.contains(h.tag)) {
      return_credit(h.length);  // its operation was cancelled here: nobody will take it
    } else {
      fail_mismatched_receives(h.tag);
      unexpected_[h.tag].push_back(Unexpected{h, std::move(*payload)});
    }
    read_header();
  });
}

void MessageChannel::on_rts() {
  const FrameHeader h = in_;
  if (RecvPtr op = pop_posted(h.tag)) return match_rts(op, h);
  if (cancelled_ops_.contains(h.tag)) return refuse_rts(h, h.tag, kFrameCancelled);
  if (unexpected_rts_ >= kMaxUnexpectedRts) return protocol_error("too many unexpected rendezvous announcements");
  fail_mismatched_receives(h.tag);
  unexpected_[h.tag].push_back(Unexpected{h, {}});
  ++unexpected_rts_;
}

// An unmatched message of an operation whose posted receives carry another signature: the ranks
// called different operations (their plans need not even share step tags). Those receives fail.
void MessageChannel::fail_mismatched_receives(const Tag& arrived) {
  for (auto it = posted_.begin(); it != posted_.end();) {
    if (!signatures_differ(it->first, arrived)) {
      ++it;
      continue;
    }
    for (auto& op : it->second) finish_recv(op, signature_mismatch(arrived.check), 0);
    it = posted_.erase(it);
  }
}

void MessageChannel::on_data() {
  const FrameHeader h = in_;
  RecvPtr op = find_rendezvous_recv(h.id);
  if (!op) return protocol_error("Data frame for an unknown receive");
  // Payload frames of one message come in order and never overlap: each starts where the last
  // ended and stays within the announced length (compared without overflow).
  if (h.offset != op->received || h.length > op->expected - op->received)
    return protocol_error("Data frame out of range");
  read_data(op, h, 0);
}

// The payload is read kPieceBytes at a time: into the buffer, or through the piece buffer to the
// sink. A receive cancelled meanwhile gets nothing more (the rest is read and dropped), and its
// cancellation is reported once the piece being read into its buffer has landed, so nothing is
// written into a buffer its caller already got back.
void MessageChannel::read_data(const RecvPtr& op, const FrameHeader& h, size_t done) {
  const size_t n = std::min(kPieceBytes, static_cast<size_t>(h.length) - done);
  const bool to_buffer = !op->sink && !op->discard;
  char* into = to_buffer ? static_cast<char*>(op->buf) + h.offset + done : piece_buffer();
  op->reading = to_buffer;
  read_payload(into, n, [this, op, h, done, n] {
    op->reading = false;
    if (op->discard) finish_recv(op, receive_cancelled(), 0);
    else if (n && op->sink) op->sink(piece_buffer(), h.offset + done, n);
    if (done + n < h.length) return read_data(op, h, done + n);
    payload_arrived(op, h);
  });
}

void MessageChannel::payload_arrived(const RecvPtr& op, const FrameHeader& h) {
  op->received += h.length;
  if (op->received == op->expected) {
    erase_rendezvous_recv(h.id);
    finish_recv(op, Status::success(), op->expected);
  }
  read_header();
}

void MessageChannel::hand_over(const PieceSink& sink, const char* data, size_t offset, size_t len) {
  for (size_t done = 0; done < len; done += kPieceBytes)
    sink(data + done, offset + done, std::min(kPieceBytes, len - done));
}

char* MessageChannel::piece_buffer() {
  if (!piece_) piece_.reset(new char[kPieceBytes]);
  return piece_.get();
}

void MessageChannel::read_payload(void* dst, size_t len, std::function<void()> then) {
  if (len == 0) return then();
  auto self = shared_from_this();
  stream_->read(dst, len, [this, self, then = std::move(then)](const boost::system::error_code& ec) {
    if (closed_) return;
    if (ec) return fail_from_error(ec, "reading a payload");
    then();
  });
}

void MessageChannel::deliver_eager(const RecvPtr& op, const FrameHeader& h, const char* payload) {
  return_credit(h.length);
  const Status status = land_eager(*op, h.tag, h.length, payload);
  finish_recv(op, status, status.ok() ? h.length : 0);
}

void MessageChannel::return_credit(size_t len) {
  const size_t credit = eager_credit_.consumed(len);
  if (!credit) return;
  FrameHeader h;
  h.type = FrameType::Credit;
  h.length = credit;
  enqueue(h, nullptr, 0);
}

void MessageChannel::match_rts(const RecvPtr& op, const FrameHeader& rts) {
  const bool mismatch = signatures_differ(op->tag, rts.tag);
  if (mismatch || rts.length > op->capacity) {
    finish_recv(op, mismatch ? signature_mismatch(rts.tag.check) : message_too_long(rts.length, op->capacity), 0);
    // The receiver's signature travels back in tag.check.
    return refuse_rts(rts, op->tag, mismatch ? kFrameMismatch : kFrameRejected);
  }
  op->expected = rts.length;
  rendezvous_matched(op, rts);
}

void MessageChannel::rendezvous_matched(const RecvPtr& op, const FrameHeader& rts) { answer_cts(op, rts); }

void MessageChannel::answer_cts(const RecvPtr& op, const FrameHeader& rts) {
  FrameHeader h;
  h.type = FrameType::Cts;
  h.tag = rts.tag;
  h.length = rts.length;
  h.id = rts.id;
  h.aux = next_id_++;
  rendezvous_recvs_[h.aux] = op;
  enqueue(h, nullptr, 0);
}

// The payload goes as Data frames of at most kDataFrameBytes, so an answer queued behind it waits
// for one frame, not the whole message. The send ends when every frame has reported (written,
// failed or dropped by cancel), with the first failure: a cancel that drops the queued frames while
// an earlier one is being written ends the send only once that write let go of the buffer.
void MessageChannel::clear_to_send(const SendPtr& op, const FrameHeader& cts) {
  struct Frames {
    size_t pending = 0;
    Status status = Status::success();
  };
  auto frames = std::make_shared<Frames>();
  frames->pending = std::max<size_t>(1, (op->len + kDataFrameBytes - 1) / kDataFrameBytes);
  FrameHeader h;
  h.type = FrameType::Data;
  h.tag = op->tag;
  h.id = cts.aux;
  const char* payload = static_cast<const char*>(op->buf);
  size_t offset = 0;
  do {
    h.offset = offset;
    h.length = std::min(kDataFrameBytes, op->len - offset);
    offset += h.length;
    enqueue(h, payload + h.offset, h.length, [this, op, frames](const Status& s) {
      if (!s.ok() && frames->status.ok()) frames->status = s;
      if (--frames->pending == 0) finish_send(op, frames->status);
    });
  } while (offset < op->len);
}

void MessageChannel::enqueue(const FrameHeader& header, const void* payload, size_t len,
                             std::function<void(const Status&)> written, UniqueFd fd) {
  if (closed_) {
    if (written) written(close_status_);
    return;
  }
  Outgoing frame{header, payload, len, std::move(written), std::move(fd)};
  if (is_answer(header)) {  // after the answers already waiting, before everything else
    auto at =
        std::find_if(write_queue_.begin(), write_queue_.end(), [](const Outgoing& o) { return !is_answer(o.header); });
    write_queue_.insert(at, std::move(frame));
  } else {
    write_queue_.push_back(std::move(frame));
  }
  flush_writes();
}

void MessageChannel::flush_writes() {
  if (closed_ || write_broken_ || !writing_.empty() || write_queue_.empty()) return;
  size_t bytes = 0;
  // A frame carrying a descriptor starts a batch: the descriptor rides on the batch's first byte,
  // so the peer holds it by the time it reads that frame.
  while (!write_queue_.empty() && writing_.size() < kMaxBatchFrames && bytes < kMaxBatchBytes &&
         (writing_.empty() || !write_queue_.front().fd)) {
    bytes += write_queue_.front().len;
    writing_.push_back(std::move(write_queue_.front()));
    write_queue_.pop_front();
  }
  std::vector<boost::asio::const_buffer> buffers;
  buffers.reserve(writing_.size() * 2);
  for (const auto& o : writing_) {
    buffers.emplace_back(&o.header, sizeof o.header);
    if (o.len) buffers.emplace_back(o.payload, o.len);
  }
  auto self = shared_from_this();
  stream_->write(buffers, writing_.front().fd.get(), [this, self](const boost::system::error_code& ec) {
    auto batch = std::move(writing_);
    writing_.clear();
    if (closed_) return;  // close() already failed the batch
    if (ec) {
      for (auto& o : batch) write_queue_.push_front(std::move(o));
      namespace err = boost::asio::error;
      if (ec == err::broken_pipe || ec == err::connection_reset) {
        // The peer closed. What it sent before closing (a notice saying
        // why) is still to be read: stop writing, and let the reader
        // reach the end of the stream and close the channel.
        write_broken_ = true;
        return;
      }
      return fail_from_error(ec, "writing");
    }
    for (auto& o : batch) {
      if (o.written) o.written(Status::success());
    }
    flush_writes();
    notify_flushed();
  });
}

MessageChannel::SendPtr MessageChannel::take_rendezvous_send(uint64_t id) {
  auto it = rendezvous_sends_.find(id);
  if (it == rendezvous_sends_.end()) return nullptr;
  SendPtr op = std::move(it->second);
  rendezvous_sends_.erase(it);
  return op;
}

MessageChannel::RecvPtr MessageChannel::find_rendezvous_recv(uint64_t id) {
  auto it = rendezvous_recvs_.find(id);
  return it == rendezvous_recvs_.end() ? nullptr : it->second;
}

void MessageChannel::erase_rendezvous_recv(uint64_t id) { rendezvous_recvs_.erase(id); }

MessageChannel::RecvPtr MessageChannel::pop_posted(const Tag& tag) { return take_posted(posted_, tag); }

void MessageChannel::finish_send(const SendPtr& op, const Status& status) { completions_.end_send(*op, status); }

void MessageChannel::finish_recv(const RecvPtr& op, const Status& status, size_t bytes) {
  completions_.end_recv(*op, status, bytes);
}

void MessageChannel::post_completion(Completion done, const Status& status, size_t bytes) {
  completions_.post(std::move(done), status, bytes);
}

void MessageChannel::fail_from_error(const boost::system::error_code& ec, const char* what) {
  namespace err = boost::asio::error;
  const bool peer_gone =
      ec == err::eof || ec == err::connection_reset || ec == err::broken_pipe || ec == err::connection_aborted;
  std::string message = std::string(transport_name_) + " connection to rank " + std::to_string(peer_) + ": " +
                        (peer_gone ? "peer closed the connection" : "error") + " while " + what + " (" + ec.message() +
                        ")";
  if (!peer_gone) DC_WARN("%s", message.c_str());  // a local fault, not a peer leaving
  close(Status::failure(peer_gone ? dcRemoteError : dcSystemError, message));
}

void MessageChannel::protocol_error(const std::string& what) {
  const Status status =
      Status::failure(dcRemoteError, std::string(transport_name_) + " connection to rank " + std::to_string(peer_) +
                                         ": protocol error: " + what + "; the connection is closed");
  // Logged here too: the communicator may have failed already and then reports only its first cause.
  DC_WARN("%s", status.message.c_str());
  close(status);
}

OwnedConnection::~OwnedConnection() {
  auto channel = channel_;
  boost::asio::post(channel->io(),
                    [channel] { channel->close(Status::failure(dcInvalidUsage, "the connection was released")); });
}

}  // namespace dc
