#include "device/cpu_queue.h"

namespace dc::device {

CpuQueue::CpuQueue(int workers) : workers_(workers < 1 ? 1 : workers) {}

Posted CpuQueue::post(const LocalStep& step, Stream stream, Completion completion) {
  // The hot path: an element step with no stream ends here, on the posting thread.
  if (stream.handle == 0 && is_element_step(step.kind)) return Posted{true, run_element_step(step), 0};
  if (step.kind > StepKind::DecodeArriving)
    return Posted{true, Status::failure(dcInvalidArgument, "DeepComm: unknown local step kind"), 0};
  if (step.kind == StepKind::DecodeArriving) {
    if (stream.handle != 0)
      return Posted{true,
                    Status::failure(dcInvalidArgument, "DeepComm: a decode of an arriving message takes no stream"), 0};
    const uint64_t id = next_id_++;
    arriving_.emplace(id, Arriving{std::make_shared<ArrivingMessage>(step.decode), completion});
    return Posted{false, {}, id};
  }
  Queued queued{step, completion, stream.handle};
  if (stream.handle != 0) {
    std::lock_guard<std::mutex> lock(lanes_mutex_);
    Lane& lane = lanes_[stream.handle];
    // Earlier steps of the stream still pending or undelivered: this one waits its turn, so that
    // it neither runs nor completes before them.
    if (lane.running || lane.undelivered > 0) {
      ++lane.undelivered;
      if (lane.running) {
        lane.waiting.push_back(std::move(queued));
        return Posted{false, {}, 0};
      }
      lane.running = true;
    } else if (is_element_step(step.kind)) {
      return Posted{true, run_element_step(step), 0};
    } else {
      ++lane.undelivered;
      lane.running = true;
    }
  }
  start_on_worker(std::move(queued));
  return Posted{false, {}, 0};
}

void CpuQueue::start_on_worker(Queued queued) {
  workers_.submit([this, queued = std::move(queued)]() mutable { run_on_worker(std::move(queued)); });
}

void CpuQueue::run_on_worker(Queued queued) {
  const LocalStep& step = queued.step;
  Status status = is_element_step(step.kind) ? run_element_step(step) : run_codec_step(step);
  const uint64_t stream = queued.stream;
  if (stream == 0) return ended(queued.completion, std::move(status), 0);
  // The completion is queued and the lane updated under one lock, so poll() never delivers a
  // stream's last completion while the stream still looks busy. The next step starts only now, its
  // completion queued after this one's: steps of one stream never overlap and complete in post order.
  std::lock_guard<std::mutex> lock(lanes_mutex_);
  ended(queued.completion, std::move(status), stream);
  Lane& lane = lanes_[stream];
  if (lane.waiting.empty()) {
    lane.running = false;  // poll() erases the lane when it delivers the completion
  } else {
    start_on_worker(std::move(lane.waiting.front()));
    lane.waiting.pop_front();
  }
}

void CpuQueue::ended(const Completion& completion, Status status, uint64_t stream) {
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(ended_mutex_);
    first = ended_.empty();
    ended_.push_back(Ended{completion, std::move(status), stream});
    ready_.fetch_add(1, std::memory_order_release);
  }
  if (first) event_.ring();
}

void CpuQueue::feed(uint64_t id, size_t available, const Status* ended_with) {
  auto it = arriving_.find(id);
  if (it == arriving_.end()) return;  // not a DecodeArriving step of this queue, or already fed its end
  auto message = it->second.message;
  const Completion completion = it->second.completion;
  {
    std::lock_guard<std::mutex> lock(message->mutex);
    if (available > message->step.message.size()) available = message->step.message.size();
    if (available > message->available) message->available = available;
    if (ended_with) message->received = *ended_with;
    if (ended_with) arriving_.erase(it);
    if (message->scheduled) return;
    message->scheduled = true;
  }
  workers_.submit([this, message, completion] {
    if (std::optional<Status> status = consume_arrived(*message)) ended(completion, std::move(*status), 0);
  });
}

size_t CpuQueue::poll() {
  // Readiness first, then the list: a completion queued after the swap writes the descriptor again.
  // Cleared on every call, also with nothing queued: a worker writes after it queued, so its write
  // can land after the poll() that took its completion, and readiness left behind would report the
  // descriptor readable for ever (a waiter re-arming on it would spin without end).
  event_.drain();
  if (ready_.load(std::memory_order_acquire) == 0) return 0;
  std::vector<Ended> batch;
  {
    std::lock_guard<std::mutex> lock(ended_mutex_);
    batch.swap(ended_);
    ready_.fetch_sub(batch.size(), std::memory_order_release);
  }
  for (Ended& e : batch) {
    if (e.stream != 0) {
      std::lock_guard<std::mutex> lock(lanes_mutex_);
      auto lane = lanes_.find(e.stream);
      if (lane != lanes_.end() && --lane->second.undelivered == 0 && !lane->second.running) lanes_.erase(lane);
    }
    if (e.completion.fn) e.completion.fn(e.completion.context, e.completion.tag, e.status);
  }
  return batch.size();
}

}  // namespace dc::device
