#include "src/core/bootstrap/deadline_socket.h"

#include <fcntl.h>

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

namespace dc {

namespace asio = boost::asio;
using boost::system::error_code;

template <class Start>
error_code DeadlineSocket::run(Start start, Clock::time_point deadline) {
  error_code result = asio::error::would_block;
  start([&result](error_code ec, auto&&...) { result = ec; });
  io_.restart();
  io_.run_until(deadline);
  if (result != asio::error::would_block) return result;
  // Deadline: cancel, and let the handler run (it may have completed just now).
  error_code ignored;
  socket_.cancel(ignored);
  io_.restart();
  io_.run();
  return result == asio::error::operation_aborted ? error_code(asio::error::timed_out) : result;
}

error_code DeadlineSocket::connect(const asio::ip::tcp::endpoint& to, Clock::time_point deadline) {
  close();
  error_code ec;
  socket_.open(to.protocol(), ec);
  if (ec) return ec;
  fcntl(socket_.native_handle(), F_SETFD, FD_CLOEXEC);
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  return run([&](auto handler) { socket_.async_connect(to, handler); }, deadline);
}

error_code DeadlineSocket::write(const std::vector<asio::const_buffer>& buffers, Clock::time_point deadline) {
  return run([&](auto handler) { asio::async_write(socket_, buffers, handler); }, deadline);
}

error_code DeadlineSocket::read(asio::mutable_buffer buffer, Clock::time_point deadline) {
  return run([&](auto handler) { asio::async_read(socket_, buffer, handler); }, deadline);
}

void DeadlineSocket::close() {
  error_code ignored;
  if (socket_.is_open()) socket_.close(ignored);
}

}  // namespace dc
