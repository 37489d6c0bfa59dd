// The operations a connection cancelled lately, (communicator, sequence). Their messages that still
// arrive are dropped or refused, so that no sender waits on a receive that will never be posted.
// Bounded: a failure cancels one operation per connection, a shrink and retry a few more.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>

#include "transports/transport.h"

namespace dc {

// Takes out of a connection's queues by tag (posted receives, unexpected messages) every entry of
// operation (comm, seq), handing each queued item to take first.
template <class QueuesByTag, class Take>
void take_queued_of_operation(QueuesByTag& queues, uint64_t comm, uint64_t seq, Take take) {
  for (auto it = queues.begin(); it != queues.end();) {
    if (it->first.comm != comm || it->first.seq != seq) {
      ++it;
      continue;
    }
    for (auto& item : it->second) take(item);
    it = queues.erase(it);
  }
}

class CancelledOps {
 public:
  static constexpr size_t kRemembered = 64;

  void remember(uint64_t comm, uint64_t seq) {
    if (contains(comm, seq)) return;
    ops_.emplace_back(comm, seq);
    if (ops_.size() > kRemembered) ops_.pop_front();
  }
  bool contains(uint64_t comm, uint64_t seq) const {
    return std::find(ops_.begin(), ops_.end(), std::make_pair(comm, seq)) != ops_.end();
  }
  bool contains(const Tag& tag) const { return contains(tag.comm, tag.seq); }

 private:
  std::deque<std::pair<uint64_t, uint64_t>> ops_;
};

}  // namespace dc
