// Eager messages of one connection, the same on the framed channel (message_channel.h) and on UCX
// (ucx_channel.h): the credit window that bounds them, and how one lands in the receive it matched.
//
// A message of up to kEagerMax bytes (less where the sender set a lower limit) goes eagerly while
// the sender has at most kEagerWindow bytes of eager messages not yet credited back, each costing
// its payload plus the receiver's bookkeeping (`header_bytes`). So the receiver buffers a bounded
// amount of unexpected data; it returns credit as receives consume messages, batched so that small
// messages do not each cost a reply.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

#include "transports/transport.h"

namespace dc {

class EagerCredit {
 public:
  static constexpr size_t kEagerMax = 64 * 1024;
  static constexpr size_t kEagerWindow = 4 * 1024 * 1024;

  explicit EagerCredit(size_t header_bytes) : header_bytes_(header_bytes) {}

  // Sender: messages longer than `max` (at most kEagerMax) go by rendezvous.
  void limit_to(size_t max) { eager_max_ = std::min(max, kEagerMax); }

  // Sender: whether a message of `len` bytes goes eagerly; if it does, its cost is taken.
  bool take(size_t len) {
    if (len > eager_max_ || outstanding_ + cost(len) > kEagerWindow) return false;
    outstanding_ += cost(len);
    return true;
  }
  // Sender: an eager message that was taken but never sent (dropped by cancel).
  void untake(size_t len) { outstanding_ -= cost(len); }
  // Sender: the receiver returned `bytes`. False: more than was taken (a protocol error).
  bool returned(size_t bytes) {
    if (bytes > outstanding_) return false;
    outstanding_ -= bytes;
    return true;
  }

  // Receiver: an eager message of `len` bytes arrived. False: beyond the window the sender may
  // use, so the sender ignores flow control (a protocol error).
  bool arrived(size_t len) {
    if (cost(len) > kEagerWindow - uncredited_) return false;
    uncredited_ += cost(len);
    return true;
  }
  // Receiver: an arrived message was consumed (received or dropped). Returns the credit to send
  // back now, 0 while the batch is below kEagerWindow / 8 (the sender's window stays well open).
  size_t consumed(size_t len) {
    to_return_ += cost(len);
    if (to_return_ < kEagerWindow / 8) return 0;
    uncredited_ -= to_return_;
    return std::exchange(to_return_, 0);
  }

 private:
  size_t cost(size_t len) const { return len + header_bytes_; }

  size_t header_bytes_;
  size_t eager_max_ = kEagerMax;
  size_t outstanding_ = 0;  // sender: eager bytes not yet credited back
  size_t uncredited_ = 0;   // receiver: eager bytes arrived and not yet credited back
  size_t to_return_ = 0;    // receiver: consumed eager bytes not yet credited back
};

// Lands an eager message (`tag`, `length` bytes at `payload`) in the receive `op` it matched (an op
// with tag, buf and capacity): copied when the signatures agree and it fits. Returns the receive's
// status; it received `length` bytes when that is success.
template <class RecvOp>
Status land_eager(const RecvOp& op, const Tag& tag, size_t length, const void* payload) {
  if (signatures_differ(op.tag, tag)) return signature_mismatch(tag.check);
  if (length > op.capacity) return message_too_long(length, op.capacity);
  if (length) std::memcpy(op.buf, payload, length);
  return Status::success();
}

}  // namespace dc
