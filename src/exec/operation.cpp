#include "src/exec/operation.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include <boost/asio/steady_timer.hpp>

#include "base/log.h"
#include "base/wake_slice.h"
#include "kernels/reduce.h"
#include "src/exec/codec_pool.h"
#include "src/exec/comm_failure.h"
#include "src/exec/engine.h"
#include "src/exec/signature.h"
#include "src/plan/plan.h"

namespace dc {

namespace {
constexpr uint64_t kPointToPointBit = 1ull << 63;
// How long a failed operation waits for its sends already on the wire. A frame being written ends
// within milliseconds; an announced message the peer never takes (it failed before posting the
// receive) would hold the caller, so after this the buffers are returned anyway.
constexpr std::chrono::milliseconds kDrainAfterFailure{250};
// Step tag of the signature exchange; plan step tags are 32-bit.
constexpr uint64_t kSignatureStep = 1ull << 40;
}  // namespace

void OpBatch::finish(const Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!status.ok() && status_.ok()) status_ = status;
  if (--outstanding_ == 0) {
    finished_.store(true, std::memory_order_release);
    cv_.notify_all();
  }
}

bool OpBatch::done() {
  std::lock_guard<std::mutex> lock(mutex_);
  return outstanding_ == 0;
}

bool OpBatch::wait_until(std::chrono::steady_clock::time_point deadline) {
  Engine& engine = Engine::instance();
  if (engine.drive_until([this] { return finished_.load(std::memory_order_acquire); }, deadline)) return true;
  Engine::Waiting waiting(engine);  // another thread drives, or the deadline passed
  use_short_wake_slice();
  std::unique_lock<std::mutex> lock(mutex_);
  return cv_.wait_until(lock, deadline, [this] { return outstanding_ == 0; });
}

Status OpBatch::status() {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

Operation::Operation(ExecComm* comm, const OpArgs& args, std::shared_ptr<const PreparedPlan> plan, uint64_t seq,
                     std::shared_ptr<OpBatch> batch)
    : comm_(comm),
      args_(args),
      prepared_(std::move(plan)),
      seq_(seq),
      batch_(std::move(batch)),
      elem_size_(datatype_size(args.datatype)),
      reduce_op_(args.op >= dcNumOps ? dcSum : args.op),
      signature_(operation_signature(args)) {
  {
    std::lock_guard<std::mutex> lock(comm_->inflight_mutex);
    ++comm_->inflight;
  }
  if (args_.compressed && args_.compressed->residual) ++args_.compressed->residual->in_use;
  started_ = std::chrono::steady_clock::now();
}

bool Operation::is_collective() const { return !is_point_to_point(args_.collective); }

Tag Operation::tag_of(const Step& step) const {
  if (is_collective()) return Tag{comm_->id, seq_, step.tag, signature_};
  return Tag{comm_->id, kPointToPointBit | seq_, 0, 0};
}

std::byte* Operation::address(const BufRef& ref) const {
  switch (ref.buf) {
    case BufId::Input: return input_ + ref.offset * elem_size_;
    case BufId::Output: return output_ + ref.offset * elem_size_;
    case BufId::Scratch: return scratch_ + ref.offset * elem_size_;
    case BufId::Bytes: return bytes_ + ref.offset;
    case BufId::Residual: return reinterpret_cast<std::byte*>(residual_ + ref.offset);
  }
  return nullptr;
}

// A signature mismatch reported by the transport becomes a message naming both calls.
Status Operation::explained(const Status& status, int peer) const {
  if (status.code != dcInvalidUsage || !status.detail || !signature_) return status;
  return Status::failure(dcInvalidUsage, "DeepComm: ranks called different operations as operation #" +
                                             std::to_string(seq_) + " of the communicator: rank " +
                                             std::to_string(comm_->rank) + " called " + describe_signature(signature_) +
                                             ", rank " + std::to_string(peer) + " called " +
                                             describe_signature(status.detail));
}

void Operation::cancel_transfers() {
  const uint64_t seq = is_collective() ? seq_ : (kPointToPointBit | seq_);
  std::vector<bool> done(comm_->nranks, false);
  auto cancel_with = [&](int peer) {
    if (peer < 0 || peer >= comm_->nranks || done[peer]) return;
    done[peer] = true;
    comm_->peer(peer)->cancel(comm_->id, seq);
  };
  for (const Step& step : prepared_->plan.steps)
    if (is_transfer(step.kind)) cancel_with(step.peer);
  if (signature_ && comm_->nranks > 1) {
    cancel_with((comm_->rank + comm_->nranks - 1) % comm_->nranks);
    cancel_with((comm_->rank + 1) % comm_->nranks);
  }
}

void Operation::post_send(int peer, const Tag& tag, const void* buf, size_t len,
                          std::function<void(const Status&)> then) {
  ++sends_in_flight_;
  auto self = shared_from_this();
  comm_->peer(peer)->send(tag, buf, len, [self, then = std::move(then)](const Status& s, size_t) {
    self->send_ended();
    then(s);
  });
}

void Operation::post_recv(int peer, const Tag& tag, void* buf, size_t capacity, PieceSink sink, Completion then) {
  ++receiving_from_[peer];
  auto self = shared_from_this();
  Completion done = [self, peer, then = std::move(then)](const Status& s, size_t got) {
    self->receive_ended(peer);
    then(s, got);
  };
  if (sink) comm_->peer(peer)->recv_pieces(tag, buf, capacity, std::move(sink), std::move(done));
  else comm_->peer(peer)->recv(tag, buf, capacity, std::move(done));
}

void Operation::send_ended() {
  --sends_in_flight_;
  release_if_unused();  // the operation may have ended while this send ran
}

void Operation::receive_ended(int peer) {
  auto it = receiving_from_.find(peer);
  if (it != receiving_from_.end() && --it->second == 0) receiving_from_.erase(it);
  release_if_unused();  // the operation may have ended while this receive landed
}

void Operation::bound_transfer_drain() {
  auto timer = std::make_shared<boost::asio::steady_timer>(Engine::instance().io(), kDrainAfterFailure);
  auto self = shared_from_this();
  timer->async_wait([self, timer](const boost::system::error_code&) {
    if (self->released_ || !self->buffers_in_use()) return;
    // Closing ends the receive at once (its remaining bytes are never read) and fails the
    // communicators sharing the connection, as the stalled peer would have. Over a copy: a close
    // may end the receives at once, which erases them.
    for (const auto& receiving : std::map<int, int>(self->receiving_from_)) {
      const int peer = receiving.first;
      DC_WARN("DeepComm: rank %d stalled in the middle of a message to a failed operation; closing the connection",
              peer);
      self->comm_->peer(peer)->close(Status::failure(
          dcSystemError, "DeepComm: connection closed: a cancelled receive from this peer did not end"));
    }
    if (self->released_) return;
    if (self->sends_in_flight_ > 0)
      DC_INFO("DeepComm: a failed operation returns its buffers with %d send(s) still announced",
              self->sends_in_flight_);
    self->release();
  });
}

bool Operation::waits_on(int peer) const {
  if (signature_ && comm_->nranks > 1) {
    const int n = comm_->nranks;
    if (!signature_received_ && peer == (comm_->rank + 1) % n) return true;
    if (!signature_sent_ && peer == (comm_->rank + n - 1) % n) return true;
  }
  const auto& steps = prepared_->plan.steps;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (is_transfer(steps[i].kind) && steps[i].peer == peer && (finished_.empty() || !finished_[i])) return true;
  }
  return false;
}

void Operation::fail(const Status& status) {
  if (!completed_) complete(status);
}

void Operation::start() {
  if (completed_) return;  // failed while queued
  if (comm_->failed && (!is_collective() || seq_ >= comm_->failed_from)) {
    complete(comm_->failure);
    return;
  }
  const Plan& plan = prepared_->plan;
  queue_ = &local_queue();
  input_ = static_cast<std::byte*>(const_cast<void*>(args_.sendbuf));
  output_ = static_cast<std::byte*>(args_.recvbuf);
  if (plan.sizes.scratch) scratch_ = comm_scratch(comm_, plan.sizes.scratch * elem_size_, 0);
  if (plan.sizes.bytes) bytes_ = comm_scratch(comm_, plan.sizes.bytes, 2);
  if (args_.compressed && args_.compressed->residual) residual_ = args_.compressed->residual->values.data();
  lengths_.assign(plan.length_slots, 0);
  started_ = std::chrono::steady_clock::now();
  if (args_.op >= dcNumOps && plan.sizes.input) {
    // Pre-multiplied sum: scale this rank's input once, then reduce as a plain sum.
    std::byte* scaled = comm_scratch(comm_, plan.sizes.input * elem_size_, 1);
    const Status scaling = run_element_now(
        device::LocalStep::premultiply(args_.datatype, scaled, input_, plan.sizes.input, args_.premul_scalar));
    if (!scaling.ok()) {
      complete(scaling);
      return;
    }
    input_ = scaled;
  }
  steps_left_ = plan.steps.size();
  waiting_on_.resize(plan.steps.size());
  finished_.assign(plan.steps.size(), 0);
  for (uint32_t i = 0; i < plan.steps.size(); ++i) {
    waiting_on_[i] = plan.steps[i].dep_count;
    if (waiting_on_[i] == 0) ready_.push_back(i);
  }
  if (signature_ && comm_->nranks > 1) exchange_signatures();
  if (steps_left_ == 0) {
    complete(Status::success());
    return;
  }
  drain();
}

// Every collective also sends its signature to the previous rank and receives the next rank's,
// outside the plan: a mismatch is then found even between plans that exchange no message (a rank
// in a broadcast chain and one in an all-reduce tree can wait on each other without either sending),
// and the operation does not complete before its neighbour's call was checked. Where a message of
// the plan opens both ranks' plans on that edge, its tag carries the check and the ring's own is
// left out: then each end still sends or awaits something from the start, whichever operation
// the other called, and a receive meets any message of the same operation number with another
// signature as a mismatch (transport.h). Toward the previous rank, because the small-message tree
// opens with a leaf's send to its parent one below it. The ring's closing edge (rank 0 to the last)
// goes too where the last rank's plans receive (opening_messages.h): the chain finds any mismatch.
void Operation::exchange_signatures() {
  const int n = comm_->nranks, next = (comm_->rank + 1) % n, previous = (comm_->rank + n - 1) % n;
  const Tag tag{comm_->id, seq_, kSignatureStep, signature_};
  const OpeningMessages& no_message = prepared_->signature_edges;
  signature_received_ = no_message.from_next;
  signature_sent_ = no_message.to_previous;
  steps_left_ += !no_message.from_next + !no_message.to_previous;  // before either may end
  auto self = shared_from_this();
  if (!no_message.from_next) {
    post_recv(next, tag, &peer_signature_, sizeof peer_signature_, nullptr,
              [self, next](const Status& s, size_t) { self->side_step_finished(s, next, &self->signature_received_); });
  }
  if (!no_message.to_previous) {
    post_send(previous, tag, &signature_, sizeof signature_,
              [self, previous](const Status& s) { self->side_step_finished(s, previous, &self->signature_sent_); });
  }
}

void Operation::side_step_finished(const Status& status, int peer, bool* done_flag) {
  if (completed_) return;
  *done_flag = true;
  if (!status.ok()) return complete(explained(status, peer));
  if (--steps_left_ == 0) complete(Status::success());
}

// Runs ready steps until none is left. Transfer completions may arrive synchronously from inside a
// transport call, so steps are queued instead of started recursively.
void Operation::drain() {
  if (draining_) return;
  draining_ = true;
  auto self = shared_from_this();
  while (!ready_.empty() && !completed_) {
    uint32_t index = ready_.back();
    ready_.pop_back();
    run_step(index);
  }
  draining_ = false;
}

void Operation::run_step(uint32_t index) {
  const Step& step = prepared_->plan.steps[index];
  const size_t bytes = step.count * elem_size_;
  auto self = shared_from_this();
  switch (step.kind) {
    case StepKind::Send:
      post_send(step.peer, tag_of(step), address(step.src), bytes, [self, index](const Status& s) {
        self->step_finished(index, self->explained(s, self->prepared_->plan.steps[index].peer));
      });
      return;
    case StepKind::Recv:
    case StepKind::RecvReduce: {
      const bool reduces = step.kind == StepKind::RecvReduce;
      std::byte* target = reduces ? address(step.aux) : address(step.dst);
      // Bytes the transport handed over in pieces, each reduced at once (then aux stays unused),
      // and the first error of those reductions.
      struct Pieces {
        size_t reduced = 0;
        Status status;
      };
      const bool by_pieces = reduces && queue_->element_steps_end_at_post();
      auto pieces = by_pieces ? std::make_shared<Pieces>() : nullptr;
      Completion done = [self, index, bytes, reduces, pieces](const Status& s, size_t got) {
        // Failed meanwhile (abort, a peer gone): its caller may have returned and freed the buffers.
        if (self->completed_) return;
        if (!s.ok()) return self->step_finished(index, self->explained(s, self->prepared_->plan.steps[index].peer));
        if (got != bytes) {
          self->step_finished(
              index, Status::failure(dcInvalidUsage, "DeepComm: received " + std::to_string(got) + " bytes where " +
                                                         std::to_string(bytes) +
                                                         " were expected (ranks called mismatched operations?)"));
          return;
        }
        if (pieces && !pieces->status.ok()) return self->step_finished(index, pieces->status);
        const Step& st = self->prepared_->plan.steps[index];
        if (reduces && (!pieces || pieces->reduced != got)) {
          // The message landed in aux whole: reduce it now.
          return self->run_local(
              index, device::LocalStep::reduce(self->args_.datatype, self->reduce_op_, self->address(st.dst),
                                               self->address(st.src), self->address(st.aux), st.count));
        }
        self->step_finished(index, s);
      };
      if (!pieces) {
        post_recv(step.peer, tag_of(step), target, bytes, nullptr, std::move(done));
        return;
      }
      PieceSink sink = [self, index, pieces](const void* data, size_t offset, size_t len) {
        if (self->completed_) return;  // failed meanwhile: the caller's buffers may be gone
        const Step& st = self->prepared_->plan.steps[index];
        const Status s = self->run_element_now(
            device::LocalStep::reduce(self->args_.datatype, self->reduce_op_, self->address(st.dst) + offset,
                                      self->address(st.src) + offset, data, len / self->elem_size_));
        if (!s.ok() && pieces->status.ok()) pieces->status = s;
        pieces->reduced += len;
      };
      post_recv(step.peer, tag_of(step), target, bytes, std::move(sink), std::move(done));
      return;
    }
    case StepKind::Copy: return run_local(index, device::LocalStep::copy(address(step.dst), address(step.src), bytes));
    case StepKind::Reduce:
      return run_local(index, device::LocalStep::reduce(args_.datatype, reduce_op_, address(step.dst),
                                                        address(step.src), address(step.aux), step.count));
    case StepKind::Finalize:
      if (args_.op != dcAvg) break;
      return run_local(index,
                       device::LocalStep::finalize_avg(args_.datatype, address(step.dst), step.count, comm_->nranks));
    case StepKind::Encode:
    case StepKind::SendMessage:
    case StepKind::RecvMessage:
    case StepKind::Decode:
    case StepKind::RecvDecode: run_message_step(index); return;
  }
  step_finished(index, Status::success());
}

void Operation::run_local(uint32_t index, const device::LocalStep& step) {
  const device::Posted posted =
      queue_->post(step, device::Stream{}, device::Completion{&Operation::local_step_completed, this, index});
  if (posted.done) return step_finished(index, posted.status);
  local_step_accepted();
}

void Operation::local_step_accepted() {
  if (local_steps_++ == 0) alive_while_local_steps_ = shared_from_this();
}

void Operation::local_step_completed(void* operation, uint64_t index, const Status& status) {
  static_cast<Operation*>(operation)->local_step_ended(static_cast<uint32_t>(index), status);
}

void Operation::local_step_ended(uint32_t index, const Status& status) {
  // Held to the end of this call: the last reference may be this one.
  std::shared_ptr<Operation> self = --local_steps_ == 0 ? std::move(alive_while_local_steps_) : nullptr;
  if (completed_) return release_if_unused();  // the operation ended while this step ran
  if (status.ok()) take_codec_output(index);
  step_finished(index, status);
}

Status Operation::run_element_now(const device::LocalStep& step) {
  const device::Posted posted = queue_->post(step, device::Stream{}, device::Completion{});
  if (posted.done) return posted.status;
  return Status::failure(dcInternalError, "DeepComm: the device queue deferred an element step needed at once");
}

void Operation::step_finished(uint32_t index, const Status& status) {
  if (completed_) return;
  if (!status.ok()) {
    complete(status);
    return;
  }
  const PreparedPlan& p = *prepared_;
  finished_[index] = 1;
  for (uint32_t k = p.dependents_begin[index]; k < p.dependents_begin[index + 1]; ++k) {
    uint32_t dependent = p.dependents[k];
    if (--waiting_on_[dependent] == 0) ready_.push_back(dependent);
  }
  if (--steps_left_ == 0) {
    complete(Status::success());
    return;
  }
  drain();
}

void Operation::complete(const Status& status) {
  if (completed_) return;
  completed_ = true;
  final_status_ = status;
  if (!status.ok()) {
    // No late message of this operation may land in buffers the caller gets back, and no send may
    // read them after: receives end, unsent frames are dropped, the rest is waited for (bounded).
    cancel_transfers();
    if (buffers_in_use()) bound_transfer_drain();
    // A failed step fails the whole communicator: the other ranks must not wait for this one. The
    // collectives before this one are complete here, so the others may still finish theirs.
    fail_comm(comm_, status, is_collective() ? seq_ : 0);
  }
  release_if_unused();  // else the last local step, send or receive to end releases
}

void Operation::release() {
  if (released_) return;
  released_ = true;
  ExecComm* comm = comm_;
  const Status status = final_status_;
  auto self = shared_from_this();
  if (args_.compressed) {
    write_stats();
    if (args_.compressed->residual) --args_.compressed->residual->in_use;
  }
  comm->active_ops.erase(self);
  if (is_collective()) {
    auto& queue = comm->collective_queue;
    const bool was_running = !queue.empty() && queue.front() == self;
    queue.erase(std::remove(queue.begin(), queue.end(), self), queue.end());
    if (was_running && !queue.empty()) {
      auto next = queue.front();  // the next collective of this communicator
      Engine::instance().post([next] { next->start(); });
    }
  }
  {
    // Out of flight before the caller learns it finished: a call right after its wait (suspend)
    // sees it done. The batch does not touch the communicator, which may be destroyed from here on.
    std::lock_guard<std::mutex> lock(comm->inflight_mutex);
    if (--comm->inflight == 0) comm->inflight_cv.notify_all();
  }
  Engine::instance().operation_ended();
  batch_->finish(status);
}

void submit(std::shared_ptr<Operation> op) {
  Engine::instance().operation_started();
  Engine::instance().post([op] {
    op->comm()->active_ops.insert(op);
    check_departed_peers(op->comm(), *op);
    if (!op->is_collective()) {
      op->start();
      return;
    }
    auto& queue = op->comm()->collective_queue;
    queue.push_back(op);
    if (queue.size() == 1) op->start();
  });
}

std::byte* comm_scratch(ExecComm* comm, size_t bytes, int slot) {
  auto& buffer = comm->scratch[slot];
  if (buffer.size() < bytes) {
    const size_t had = buffer.size();
    buffer = ScratchMemory(bytes);
    comm->scratch_held += bytes - had;
  }
  return buffer.data();
}

}  // namespace dc
