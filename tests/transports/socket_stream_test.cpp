// The transports' FrameStreams over a real socket pair, the TCP transport's (make_socket_stream)
// and the shm transport's (make_unix_fd_stream): reads are exact whatever the sender's write
// boundaries (several frames in one write, one frame over several), through the read-ahead buffer
// or straight into a long destination, complete later and never inside read(), and report the peer
// closing mid-read; descriptors sent with frames are taken in order, one that came ahead with a
// later frame waiting behind the earlier ones.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "base/scm_rights.h"
#include "transports/common/frame_stream.h"

namespace {

using boost::system::error_code;

enum class Kind { Socket, UnixFd };

class SocketStreamTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    dc::StreamSocket socket(io_, boost::asio::generic::stream_protocol(AF_UNIX, SOCK_STREAM), fds[0]);
    stream_ = GetParam() == Kind::Socket ? dc::make_socket_stream(std::move(socket))
                                         : dc::make_unix_fd_stream(std::move(socket));
    writer_ = fds[1];
    const timeval limit{5, 0};  // a writer the reader stopped draining gives up instead of hanging
    ASSERT_EQ(::setsockopt(writer_, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit), 0);
  }
  void TearDown() override {
    if (writer_ >= 0) ::close(writer_);
  }

  void send(const std::string& bytes) {
    ASSERT_EQ(::write(writer_, bytes.data(), bytes.size()), ssize_t(bytes.size()));
  }

  // Sends bytes with descriptor fd on their first byte (SCM_RIGHTS).
  void send_with(const std::string& bytes, int fd) {
    iovec iov{const_cast<char*>(bytes.data()), bytes.size()};
    alignas(cmsghdr) char control[dc::kOneFdControlBytes];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    dc::attach_fd(msg, control, fd);
    ASSERT_EQ(::sendmsg(writer_, &msg, 0), ssize_t(bytes.size()));
  }

  // Reads len bytes, running the io_context until the read completes (bounded); its error.
  error_code read(std::string& into, size_t len) {
    into.assign(len, '\0');
    bool done = false, inside_read = true;
    error_code result;
    stream_->read(into.data(), len, [&](const error_code& ec) {
      EXPECT_FALSE(inside_read) << "a read completed inside read()";
      result = ec;
      done = true;
    });
    inside_read = false;
    run_until(done);
    EXPECT_TRUE(done) << "a read of " << len << " bytes never completed";
    return result;
  }

  // Runs the io_context until done (5 s at most; it stops whenever it runs out of work).
  void run_until(const bool& done) {
    for (int i = 0; i < 5000 && !done; ++i) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(1));
    }
  }

  boost::asio::io_context io_;
  std::unique_ptr<dc::FrameStream> stream_;
  int writer_ = -1;
};

TEST_P(SocketStreamTest, FramesInOneWriteReadApartExactly) {
  send("HEADER01payloadHEADER02");
  std::string got;
  ASSERT_FALSE(read(got, 8));
  EXPECT_EQ(got, "HEADER01");
  ASSERT_FALSE(read(got, 7));  // served from what the first recv took
  EXPECT_EQ(got, "payload");
  ASSERT_FALSE(read(got, 8));
  EXPECT_EQ(got, "HEADER02");
}

TEST_P(SocketStreamTest, OneFrameOverSeveralWrites) {
  send("HEAD");
  bool done = false;
  std::string into(8, '\0');
  stream_->read(into.data(), 8, [&](const error_code& ec) {
    EXPECT_FALSE(ec);
    done = true;
  });
  io_.poll();
  EXPECT_FALSE(done) << "a read completed with half its bytes";
  send("ER01");
  run_until(done);
  EXPECT_TRUE(done);
  EXPECT_EQ(into, "HEADER01");
}

// A payload longer than the read-ahead buffer: part of it arrives with its header, the rest goes
// straight into the destination, written by a thread while the reader waits.
TEST_P(SocketStreamTest, LongPayloadAfterItsHeader) {
  std::string payload(1 << 20, '\0');
  std::iota(payload.begin(), payload.end(), 0);
  std::string header = "HEADER01";
  std::thread writer([&] {
    std::string all = header + payload + "NEXTHEAD";
    for (size_t sent = 0; sent < all.size();) {
      const ssize_t n = ::write(writer_, all.data() + sent, std::min<size_t>(all.size() - sent, 100000));
      ASSERT_GT(n, 0);
      sent += static_cast<size_t>(n);
    }
  });
  std::string got;
  ASSERT_FALSE(read(got, header.size()));
  EXPECT_EQ(got, header);
  ASSERT_FALSE(read(got, payload.size()));
  EXPECT_TRUE(got == payload) << "the long payload arrived altered";
  ASSERT_FALSE(read(got, 8));
  EXPECT_EQ(got, "NEXTHEAD");
  writer.join();
}

TEST_P(SocketStreamTest, PeerClosingMidReadIsReported) {
  send("HEADER01pay");
  ::close(writer_);
  writer_ = -1;
  std::string got;
  ASSERT_FALSE(read(got, 8));
  EXPECT_EQ(read(got, 7), boost::asio::error::eof);
}

// Descriptors travel with frames (the shm transport's memory notices): frames read through the
// read-ahead buffer may bring a later frame's descriptor early, and it waits in order. The two
// descriptors are told apart by their inodes.
using UnixFdStreamTest = SocketStreamTest;  // only the Unix stream carries descriptors

TEST_P(UnixFdStreamTest, DescriptorsAreTakenInTheOrderTheirFramesWereSent) {
  const int first = ::memfd_create("first", MFD_CLOEXEC), second = ::memfd_create("second", MFD_CLOEXEC);
  ASSERT_GE(first, 0);
  ASSERT_GE(second, 0);
  auto inode = [](int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 ? st.st_ino : 0;
  };
  send("PLAIN001");
  send_with("MEMORY01", first);
  send("PLAIN002");
  send_with("MEMORY02", second);
  std::string got;
  ASSERT_FALSE(read(got, 8));
  EXPECT_EQ(got, "PLAIN001");
  ASSERT_FALSE(read(got, 24));
  EXPECT_EQ(got, "MEMORY01PLAIN002MEMORY02");
  const int taken_first = stream_->take_fd();
  const int taken_second = stream_->take_fd();
  EXPECT_EQ(stream_->take_fd(), -1) << "a descriptor more than was sent";
  EXPECT_EQ(inode(taken_first), inode(first));
  EXPECT_EQ(inode(taken_second), inode(second));
  EXPECT_NE(inode(first), inode(second));
  for (int fd : {first, second, taken_first, taken_second})
    if (fd >= 0) ::close(fd);
}

INSTANTIATE_TEST_SUITE_P(Streams, SocketStreamTest, ::testing::Values(Kind::Socket, Kind::UnixFd),
                         [](const auto& info) { return info.param == Kind::Socket ? "Socket" : "UnixFd"; });
INSTANTIATE_TEST_SUITE_P(Streams, UnixFdStreamTest, ::testing::Values(Kind::UnixFd),
                         [](const auto&) { return "UnixFd"; });

}  // namespace
