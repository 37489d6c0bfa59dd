// A blocking TCP client whose every operation ends by a deadline: each runs as an asynchronous
// operation on a private io_context for at most the time left, then is cancelled.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <vector>

namespace dc {

class DeadlineSocket {
 public:
  using Clock = std::chrono::steady_clock;

  DeadlineSocket() : socket_(io_) {}

  // One attempt; a timeout reads as boost::asio::error::timed_out.
  boost::system::error_code connect(const boost::asio::ip::tcp::endpoint& to, Clock::time_point deadline);
  boost::system::error_code write(const std::vector<boost::asio::const_buffer>& buffers, Clock::time_point deadline);
  boost::system::error_code read(boost::asio::mutable_buffer buffer, Clock::time_point deadline);
  void close();

 private:
  template <class Start>
  boost::system::error_code run(Start start, Clock::time_point deadline);

  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
};

}  // namespace dc
