// Bounds the connections of one listener that have not proved the secret yet: each may take
// handshake::kDeadline, and a new one beyond the limit evicts the oldest (so a flood of idle
// strangers cannot keep a real peer out, and costs a bounded amount of memory and descriptors).
// Runs on the listener's io_context thread only.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>

#include "base/handshake.h"

namespace dc {

class HandshakeSlots {
 public:
  using Ticket = uint64_t;

  explicit HandshakeSlots(boost::asio::io_context& io, size_t limit = handshake::kMaxPending,
                          std::chrono::milliseconds deadline = handshake::kDeadline);
  HandshakeSlots(const HandshakeSlots&) = delete;
  HandshakeSlots& operator=(const HandshakeSlots&) = delete;

  // Takes a slot for a new connection; `evict` closes it (at the deadline, when a newer connection
  // needs the slot, or on clear()).
  Ticket admit(std::function<void()> evict);
  // The connection's handshake ended (either way): its slot is free.
  void release(Ticket ticket);
  // Evicts every connection still in its handshake.
  void clear();
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Ticket ticket;
    std::function<void()> evict;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };
  void evict(std::list<Entry>::iterator it);

  boost::asio::io_context& io_;
  size_t limit_;
  std::chrono::milliseconds deadline_;
  std::list<Entry> entries_;  // oldest first
  Ticket next_ticket_ = 1;
};

}  // namespace dc
