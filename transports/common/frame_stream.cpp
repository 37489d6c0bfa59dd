#include "transports/common/frame_stream.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>

#include <boost/asio/error.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "base/ready_handlers.h"
#include "base/scm_rights.h"

namespace dc {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// Frames of up to a few KiB: a read shorter than this goes through the stream's read-ahead buffer.
constexpr size_t kReadAhead = 8 * 1024;

asio::io_context& io_of(StreamSocket& socket) {
  return static_cast<asio::io_context&>(socket.get_executor().context());
}

// A read of exactly `left` more bytes into dst.
struct ReadOp {
  char* dst;
  size_t left;
  FrameStream::Handler done;
};

// Bytes a stream received ahead of the reads that take them: bytes[begin, end) is not read yet.
struct ReadAhead {
  std::array<char, kReadAhead> bytes;
  size_t begin = 0, end = 0;

  // Moves what the buffer holds into op, as far as op wants; whether that completed it.
  bool take(ReadOp& op) {
    const size_t n = std::min(op.left, end - begin);
    std::memcpy(op.dst, bytes.data() + begin, n);
    begin += n;
    op.dst += n;
    op.left -= n;
    return op.left == 0;
  }
  // n bytes just received into the (empty) buffer.
  void refilled(size_t n) {
    begin = 0;
    end = n;
  }
};

// Reads through a small read-ahead buffer: one recv takes a frame's header, a small payload and
// whatever follows, where reading each exactly (asio::async_read) cost a recv for the header, one
// for the payload, and a speculative one before the next header that found nothing. What is left
// to read once the buffer is empty goes straight into the destination when it is at least
// kReadAhead long (a large payload is not copied twice).
class SocketStream : public FrameStream {
 public:
  explicit SocketStream(StreamSocket socket) : socket_(std::move(socket)) { socket_.non_blocking(true); }

  void read(void* dst, size_t len, Handler done) override {
    auto op = std::make_shared<ReadOp>(ReadOp{static_cast<char*>(dst), len, std::move(done)});
    if (ahead_.take(*op) || (op->left >= kReadAhead && take_arrived(*op))) {
      // Never inside read(): the channel calls read() from its own handlers.
      return ready_handlers::post(io_of(socket_), [op] { op->done(error_code()); });
    }
    read_more(op);
  }

  void write(const std::vector<asio::const_buffer>& buffers, int /*fd*/, Handler done) override {
    asio::async_write(socket_, buffers, [done = std::move(done)](const error_code& ec, size_t) { done(ec); });
  }

  void close() override {
    error_code ignored;
    socket_.shutdown(StreamSocket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  // Reads what has arrived straight into a long read, without waiting; whether that completed it.
  // A payload mostly follows its header at once, but asio reads speculatively only after a recv
  // that filled its buffer, and the read-ahead recv that took the header often did not: without
  // this a long payload waited for the next pass through the reactor (2 MiB all-reduces over TCP
  // measured up to 1.4x slower).
  bool take_arrived(ReadOp& op) {
    error_code ec;
    const size_t n = socket_.read_some(asio::buffer(op.dst, op.left), ec);  // non-blocking socket
    op.dst += n;
    op.left -= n;
    return op.left == 0;
  }

  // The buffer is empty and the read wants more: from the socket, through the buffer or straight.
  void read_more(const std::shared_ptr<ReadOp>& op) {
    if (op->left >= kReadAhead) {
      return asio::async_read(socket_, asio::buffer(op->dst, op->left),
                              [op](const error_code& ec, size_t) { op->done(ec); });
    }
    ahead_.refilled(0);
    socket_.async_read_some(asio::buffer(ahead_.bytes), [this, op](const error_code& ec, size_t n) {
      if (ec) return op->done(ec);
      ahead_.refilled(n);
      if (ahead_.take(*op)) return op->done(error_code());
      read_more(op);
    });
  }

  StreamSocket socket_;
  ReadAhead ahead_;
};

error_code from_errno(int err) { return error_code(err, boost::system::system_category()); }

// Reads and writes with recvmsg/sendmsg on the non-blocking socket, waiting for readiness through
// the io_context when the kernel has nothing (or no room) right now. Reads go through a read-ahead
// buffer as SocketStream's do (a short frame and its header in one recvmsg); a long rest goes
// straight into its destination. Descriptors queue in arrival order, so one that came ahead with a
// later frame's first byte waits for that frame.
class UnixFdStream : public FrameStream {
 public:
  explicit UnixFdStream(StreamSocket socket) : socket_(std::move(socket)) { socket_.non_blocking(true); }
  ~UnixFdStream() override {
    for (int fd : received_) ::close(fd);
  }

  void read(void* dst, size_t len, Handler done) override {
    auto op = std::make_shared<ReadOp>(ReadOp{static_cast<char*>(dst), len, std::move(done)});
    continue_read(op);
  }

  void write(const std::vector<asio::const_buffer>& buffers, int fd, Handler done) override {
    auto op = std::make_shared<WriteOp>();
    for (const auto& b : buffers)
      if (b.size()) op->iov.push_back(iovec{const_cast<void*>(b.data()), b.size()});
    op->fd = fd;
    op->done = std::move(done);
    continue_write(op);
  }

  int take_fd() override {
    if (received_.empty()) return -1;
    const int fd = received_.front();
    received_.pop_front();
    return fd;
  }

  void close() override {
    error_code ignored;
    socket_.shutdown(StreamSocket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  struct WriteOp {
    std::vector<iovec> iov;
    size_t first = 0;  // iov[first..] still to write
    int fd = -1;       // still to send (with the next byte written)
    Handler done;
  };

  void finish(Handler done, const error_code& ec) {
    ready_handlers::post(io_of(socket_), [done = std::move(done), ec] { done(ec); });
  }

  void keep_fds(msghdr& msg) {
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        if (received_.size() < kMaxQueuedFds) received_.push_back(fd);
        else ::close(fd);  // more than any frame sequence of ours can have in flight
      }
    }
  }

  void continue_read(const std::shared_ptr<ReadOp>& op) {
    while (!ahead_.take(*op)) {
      // The buffer is empty: a long rest straight into the destination, a short one through it.
      const bool straight = op->left >= kReadAhead;
      iovec iov{straight ? op->dst : ahead_.bytes.data(), straight ? op->left : ahead_.bytes.size()};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxQueuedFds)];
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      const ssize_t n = ::recvmsg(socket_.native_handle(), &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
      if (n > 0) {
        keep_fds(msg);
        if (straight) {
          op->dst += n;
          op->left -= static_cast<size_t>(n);
        } else {
          ahead_.refilled(static_cast<size_t>(n));
        }
        continue;
      }
      if (n == 0) return finish(std::move(op->done), asio::error::eof);
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return finish(std::move(op->done), from_errno(errno));
      socket_.async_wait(StreamSocket::wait_read, [this, op](const error_code& ec) {
        if (ec) return op->done(ec);
        continue_read(op);
      });
      return;
    }
    finish(std::move(op->done), error_code());
  }

  void continue_write(const std::shared_ptr<WriteOp>& op) {
    while (op->first < op->iov.size()) {
      alignas(cmsghdr) char control[kOneFdControlBytes];
      msghdr msg{};
      msg.msg_iov = &op->iov[op->first];
      msg.msg_iovlen = std::min<size_t>(op->iov.size() - op->first, IOV_MAX);
      if (op->fd >= 0) attach_fd(msg, control, op->fd);
      ssize_t n = ::sendmsg(socket_.native_handle(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        op->fd = -1;  // it went with the first byte
        for (size_t left = static_cast<size_t>(n); left;) {
          iovec& v = op->iov[op->first];
          const size_t step = std::min(left, v.iov_len);
          v.iov_base = static_cast<char*>(v.iov_base) + step;
          v.iov_len -= step;
          left -= step;
          if (v.iov_len == 0) ++op->first;
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return finish(std::move(op->done), from_errno(errno));
      socket_.async_wait(StreamSocket::wait_write, [this, op](const error_code& ec) {
        if (ec) return op->done(ec);
        continue_write(op);
      });
      return;
    }
    finish(std::move(op->done), error_code());
  }

  StreamSocket socket_;
  std::deque<int> received_;
  ReadAhead ahead_;
};

}  // namespace

std::unique_ptr<FrameStream> make_socket_stream(StreamSocket socket) {
  return std::make_unique<SocketStream>(std::move(socket));
}

std::unique_ptr<FrameStream> make_unix_fd_stream(StreamSocket socket) {
  return std::make_unique<UnixFdStream>(std::move(socket));
}

}  // namespace dc
