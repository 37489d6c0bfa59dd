#include "base/ready_handlers.h"

#include <deque>
#include <utility>

#include <boost/asio/post.hpp>

namespace dc::ready_handlers {

namespace {

thread_local boost::asio::io_context* t_io = nullptr;  // set while this thread drains for it
thread_local std::deque<std::function<void()>> t_queue;

}  // namespace

void post(boost::asio::io_context& io, std::function<void()> fn) {
  if (t_io == &io) {
    t_queue.push_back(std::move(fn));
    return;
  }
  boost::asio::post(io, std::move(fn));
}

bool run_one() {
  if (t_queue.empty()) return false;
  auto fn = std::move(t_queue.front());
  t_queue.pop_front();
  fn();
  return true;
}

bool draining_for(const boost::asio::io_context& io) { return t_io == &io; }

DrainingScope::DrainingScope(boost::asio::io_context& io) { t_io = &io; }

DrainingScope::~DrainingScope() {
  auto* io = std::exchange(t_io, nullptr);
  for (auto& fn : t_queue) boost::asio::post(*io, std::move(fn));
  t_queue.clear();
}

}  // namespace dc::ready_handlers
