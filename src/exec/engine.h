// The progress engine: one per process, a boost::asio::io_context driven by one thread that blocks
// in epoll on every transport's sockets (no busy-waiting). Operations are posted to it from user
// threads; transports and the executor run only on it. A fork() parks the engine thread between
// handlers until it is done, so that the child inherits no lock the thread held; the child gets a
// fresh engine on first use (the parent's thread does not exist in the child).
#pragma once

#include <functional>
#include <thread>

#include <boost/asio/io_context.hpp>

namespace dc {

class Engine {
 public:
  static Engine& instance();

  boost::asio::io_context& io() { return io_; }
  void post(std::function<void()> fn);

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine();

 private:
  Engine();
  void run();

  boost::asio::io_context io_;
  std::thread thread_;
};

}  // namespace dc
