// The bytes under a MessageChannel. The transports give it a socket; the fuzz targets give it a
// scripted buffer, so that the channel's state machine runs without sockets or an engine thread.
// Everything runs on one io_context thread; completions are posted, never called inside read() or
// write().
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include <boost/asio/buffer.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/system/error_code.hpp>

namespace dc {

class FrameStream {
 public:
  using Handler = std::function<void(const boost::system::error_code&)>;
  virtual ~FrameStream() = default;
  // Reads exactly len bytes into dst.
  virtual void read(void* dst, size_t len, Handler done) = 0;
  // Writes all of buffers. A descriptor `fd` >= 0 travels with their first byte (Unix sockets
  // only); the caller keeps it open until done runs.
  virtual void write(const std::vector<boost::asio::const_buffer>& buffers, int fd, Handler done) = 0;
  // The oldest descriptor that arrived with the bytes received so far (the caller owns it), or -1:
  // a read-ahead may have received a later frame's, which waits behind the earlier ones.
  virtual int take_fd() { return -1; }
  virtual void close() = 0;
};

using StreamSocket = boost::asio::generic::stream_protocol::socket;

// A TCP (or any) stream socket; carries no descriptors.
std::unique_ptr<FrameStream> make_socket_stream(StreamSocket socket);
// A Unix stream socket that also carries descriptors (SCM_RIGHTS) both ways. At most
// kMaxQueuedFds received descriptors wait to be taken; more are closed on arrival.
std::unique_ptr<FrameStream> make_unix_fd_stream(StreamSocket socket);
constexpr size_t kMaxQueuedFds = 8;

}  // namespace dc
