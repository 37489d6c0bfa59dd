// Handlers that the thread running the progress engine's handlers queues for itself. Asio's
// io_context runs its reactor (a non-blocking epoll_wait) whenever the reactor's turn comes round in
// its queue, and a handler posted from a handler queues behind that turn: each completion a
// transport posts cost one more epoll_wait (issue 32: about 7 per message of a small all-reduce).
// A handler posted here by the thread that runs the io_context's handlers now (the engine's thread,
// or a caller driving it) waits in a queue of that thread's own, which it drains between its polls
// without the reactor; posted from any other thread, it goes through boost::asio::post as before.
// Either way it runs later, never inside the call that posted it.
#pragma once

#include <cstddef>
#include <functional>

#include <boost/asio/io_context.hpp>

namespace dc::ready_handlers {

// Runs fn later on io's handler thread.
void post(boost::asio::io_context& io, std::function<void()> fn);

// Runs the oldest handler this thread queued; false when there is none.
bool run_one();

// Whether the calling thread runs io's handlers now and drains its own queue.
bool draining_for(const boost::asio::io_context& io);

// Marks the calling thread as running io's handlers for its lifetime. What is still queued at its
// end goes to io through boost::asio::post: whoever runs io next runs it.
class DrainingScope {
 public:
  explicit DrainingScope(boost::asio::io_context& io);
  ~DrainingScope();
  DrainingScope(const DrainingScope&) = delete;
  DrainingScope& operator=(const DrainingScope&) = delete;
};

}  // namespace dc::ready_handlers
