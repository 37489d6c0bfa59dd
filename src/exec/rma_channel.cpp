#include "src/exec/rma_channel.h"

#include <cstring>
#include <string>

#include "src/exec/comm_failure.h"
#include "src/exec/engine.h"

namespace dc {

namespace {

// Apart from collectives (counted from 0), point-to-point (bit 63) and the control channel (2^62).
constexpr uint64_t kRmaSeq = (1ull << 62) + 1;

std::string put_name(int peer, const RmaHeader& h) {
  return "a put of " + std::to_string(h.bytes) + " bytes from rank " + std::to_string(peer) + " at offset " +
         std::to_string(h.offset) + " of window " + std::to_string(h.window);
}

}  // namespace

SignalBoard::SignalBoard(int contexts, int nranks)
    : nranks_(nranks), arrived_(static_cast<size_t>(contexts) * kSignalsPerContext * nranks), taken_(arrived_.size()) {}

size_t SignalBoard::slot(int context, int signal, int peer) const {
  return (static_cast<size_t>(context) * kSignalsPerContext + signal) * nranks_ + peer;
}

void SignalBoard::arrive(int context, int signal, int peer) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++arrived_[slot(context, signal, peer)];
  cv_.notify_all();
}

bool SignalBoard::take(const std::vector<SignalWait>& waits, std::chrono::steady_clock::time_point deadline,
                       Status* result) {
  // Several waits may name one counter: they add up.
  std::map<size_t, uint64_t> wanted;
  for (const SignalWait& w : waits) wanted[slot(w.context, w.signal, w.peer)] += static_cast<uint64_t>(w.count);
  std::unique_lock<std::mutex> lock(mutex_);
  const auto all_arrived = [&] {
    for (const auto& [at, count] : wanted)
      if (arrived_[at] - taken_[at] < count) return false;
    return true;
  };
  if (!cv_.wait_until(lock, deadline, [&] { return !failure_.ok() || all_arrived(); })) return false;
  *result = failure_;
  if (failure_.ok())
    for (const auto& [at, count] : wanted) taken_[at] += count;
  return true;
}

void SignalBoard::fail(const Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_.ok()) failure_ = status;
  cv_.notify_all();
}

RmaChannel::RmaChannel(ExecComm* comm, int contexts)
    : comm_(comm),
      contexts_(contexts),
      board_(std::make_unique<SignalBoard>(contexts, comm->nranks)),
      inbox_(comm->nranks),
      next_from_(comm->nranks),
      next_to_(comm->nranks),
      landing_window_(comm->nranks, -1) {
  Engine::instance().passive_service_opened();  // peers' puts arrive with no call here
}

RmaChannel::~RmaChannel() { Engine::instance().passive_service_closed(); }

std::shared_ptr<RmaChannel> RmaChannel::start(ExecComm* comm, int contexts) {
  std::shared_ptr<RmaChannel> channel(new RmaChannel(comm, contexts));
  if (comm->failed) channel->fail(comm->failure);
  for (int p = 0; p < comm->nranks; ++p)
    if (p != comm->rank) channel->post_header_receive(p);
  return channel;
}

Tag RmaChannel::tag(uint64_t step) const { return Tag{comm_->id, kRmaSeq, step}; }

void RmaChannel::add_window(uint32_t window, void* base, size_t bytes) {
  windows_[window] = Window{static_cast<char*>(base), bytes};
}

void RmaChannel::remove_window(uint32_t window) {
  windows_.erase(window);
  for (int p = 0; p < static_cast<int>(landing_window_.size()); ++p) {
    if (landing_window_[p] != static_cast<int64_t>(window)) continue;
    comm_->peer(p)->cancel(comm_->id, kRmaSeq);  // nothing more lands in the window
    fail_comm(comm_, Status::failure(dcInvalidUsage, "DeepComm: window " + std::to_string(window) +
                                                         " was deregistered while a put from rank " +
                                                         std::to_string(p) + " was landing in it"));
  }
}

void RmaChannel::fail(const Status& status) {
  board_->fail(status);
  for (int p = 0; p < comm_->nranks; ++p)
    if (p != comm_->rank) comm_->peer(p)->cancel(comm_->id, kRmaSeq);
}

void RmaChannel::post_header_receive(int peer) {
  auto self = shared_from_this();
  const uint64_t step = 2 * next_from_[peer];
  comm_->peer(peer)->recv(tag(step), &inbox_[peer], sizeof(RmaHeader), [self, peer](const Status& s, size_t bytes) {
    // A failed receive means the peer's connection closed: the control channel tells whether it
    // died (and fails the communicator) or left in order.
    if (!self->comm_ || !s.ok()) return;
    if (bytes != sizeof(RmaHeader)) {
      fail_comm(self->comm_, Status::failure(dcRemoteError, "DeepComm: a malformed one-sided header from rank " +
                                                                std::to_string(peer)));
      return;
    }
    self->on_header(peer);
  });
}

Status RmaChannel::check(int peer, const RmaHeader& h) const {
  if (h.context < 0 || h.context >= contexts_ || h.signal < 0 || h.signal >= kSignalsPerContext) {
    return Status::failure(dcRemoteError, "DeepComm: rank " + std::to_string(peer) + " signalled context " +
                                              std::to_string(h.context) + ", signal " + std::to_string(h.signal) +
                                              ", which this rank does not have");
  }
  if (h.bytes == 0) return Status::success();
  const auto it = windows_.find(h.window);
  if (it == windows_.end()) {
    return Status::failure(dcInvalidUsage,
                           "DeepComm: " + put_name(peer, h) + " arrived, but this rank has no such window");
  }
  if (h.offset > it->second.bytes || h.bytes > it->second.bytes - h.offset) {
    return Status::failure(dcInvalidUsage, "DeepComm: " + put_name(peer, h) + " ends past the window's " +
                                               std::to_string(it->second.bytes) + " bytes");
  }
  return Status::success();
}

void RmaChannel::on_header(int peer) {
  const RmaHeader h = inbox_[peer];
  const Status valid = check(peer, h);
  if (!valid.ok()) return fail_comm(comm_, valid);  // nothing of it is written
  if (h.bytes == 0) {
    landed(peer, h);
    return;
  }
  char* at = windows_.at(h.window).base + h.offset;
  landing_window_[peer] = h.window;
  auto self = shared_from_this();
  const uint64_t step = 2 * next_from_[peer] + 1;
  comm_->peer(peer)->recv(tag(step), at, h.bytes, [self, peer, h](const Status& s, size_t bytes) {
    if (!self->comm_ || !s.ok()) return;
    self->landing_window_[peer] = -1;
    if (bytes != h.bytes) {
      fail_comm(self->comm_, Status::failure(dcRemoteError, "DeepComm: " + put_name(peer, h) + " came with " +
                                                                std::to_string(bytes) + " bytes"));
      return;
    }
    self->landed(peer, h);
  });
}

void RmaChannel::landed(int peer, const RmaHeader& h) {
  board_->arrive(h.context, h.signal, peer);
  ++next_from_[peer];
  post_header_receive(peer);
}

void RmaChannel::put(int peer, const RmaHeader& header, const void* data, std::function<void(const Status&)> done) {
  if (comm_->failed) return done(comm_->failure);
  if (peer == comm_->rank) {
    const Status valid = check(peer, header);
    if (!valid.ok()) return done(valid);
    if (header.bytes) std::memmove(windows_.at(header.window).base + header.offset, data, header.bytes);
    board_->arrive(header.context, header.signal, peer);
    return done(Status::success());
  }
  struct Sending {
    RmaHeader header;
    int left;
    Status status;
    std::function<void(const Status&)> done;
  };
  auto sending = std::make_shared<Sending>(Sending{header, header.bytes ? 2 : 1, Status::success(), std::move(done)});
  // A send the communicator's failure cancelled ends with that failure (a timeout, a dead peer),
  // not with the transport's cancellation.
  const auto sent = [sending, self = shared_from_this()](const Status& s, size_t) {
    if (!s.ok() && sending->status.ok())
      sending->status = self->comm_ && self->comm_->failed ? self->comm_->failure : s;
    if (--sending->left == 0) sending->done(sending->status);
  };
  const uint64_t n = next_to_[peer]++;
  Connection* to = comm_->peer(peer);
  to->send(tag(2 * n), &sending->header, sizeof(RmaHeader), sent);
  if (header.bytes) to->send(tag(2 * n + 1), data, header.bytes, sent);
}

}  // namespace dc
