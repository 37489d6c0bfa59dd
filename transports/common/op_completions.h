// How a connection ends its sends and receives, the same on every transport: each ends once (its
// completion is taken from it), its bytes count only when it succeeded, and the completion runs
// later on the io_context (base/ready_handlers.h), never inside the call that ended it.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

#include <boost/asio/io_context.hpp>

#include "base/ready_handlers.h"
#include "transports/transport.h"

namespace dc {

class OpCompletions {
 public:
  explicit OpCompletions(boost::asio::io_context& io) : io_(io) {}

  // Op: a send with `done` and `len`.
  template <class Op>
  void end_send(Op& op, const Status& status) {
    if (!op.done) return;
    if (status.ok()) sent_ += op.len;
    post(std::exchange(op.done, nullptr), status, status.ok() ? op.len : 0);
  }
  // A send the receiver refused because its operation was cancelled: it ends without error and
  // without bytes (the failure's cause reaches this rank as the communicator's notice).
  template <class Op>
  void end_send_dropped(Op& op) {
    post(std::exchange(op.done, nullptr), Status::success(), 0);
  }
  // Op: a receive with `done`.
  template <class Op>
  void end_recv(Op& op, const Status& status, size_t bytes) {
    if (!op.done) return;
    if (status.ok()) received_ += bytes;
    post(std::exchange(op.done, nullptr), status, bytes);
  }
  void post(Completion done, const Status& status, size_t bytes) {
    if (!done) return;
    ready_handlers::post(io_, [done = std::move(done), status, bytes] { done(status, bytes); });
  }
  TransportCounters counters() const { return {sent_.load(), received_.load()}; }

 private:
  boost::asio::io_context& io_;
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> received_{0};
};

// The first receive posted under `tag`, taken off its queue (its tag's entry goes with the last);
// null when none. Posted: a map from Tag to a deque of receive pointers.
template <class Posted>
typename Posted::mapped_type::value_type take_posted(Posted& posted, const Tag& tag) {
  auto it = posted.find(tag);
  if (it == posted.end()) return nullptr;
  auto op = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) posted.erase(it);
  return op;
}

}  // namespace dc
