#include "base/handshake_slots.h"

#include <algorithm>

namespace dc {

HandshakeSlots::HandshakeSlots(boost::asio::io_context& io, size_t limit, std::chrono::milliseconds deadline)
    : io_(io), limit_(limit), deadline_(deadline) {}

HandshakeSlots::Ticket HandshakeSlots::admit(std::function<void()> evict_fn) {
  while (entries_.size() >= limit_) evict(entries_.begin());
  const Ticket ticket = next_ticket_++;
  auto timer = std::make_unique<boost::asio::steady_timer>(io_, deadline_);
  timer->async_wait([this, ticket](const boost::system::error_code& ec) {
    if (ec) return;  // released, evicted or the slots are gone: nothing of `this` to touch
    auto it = std::find_if(entries_.begin(), entries_.end(), [ticket](const Entry& e) { return e.ticket == ticket; });
    if (it != entries_.end()) evict(it);
  });
  entries_.push_back(Entry{ticket, std::move(evict_fn), std::move(timer)});
  return ticket;
}

void HandshakeSlots::release(Ticket ticket) {
  auto it = std::find_if(entries_.begin(), entries_.end(), [ticket](const Entry& e) { return e.ticket == ticket; });
  if (it != entries_.end()) entries_.erase(it);  // destroying the timer cancels it
}

void HandshakeSlots::clear() {
  while (!entries_.empty()) evict(entries_.begin());
}

void HandshakeSlots::evict(std::list<Entry>::iterator it) {
  auto evict_fn = std::move(it->evict);
  entries_.erase(it);
  evict_fn();
}

}  // namespace dc
