// The TCP transport's FrameStream (make_socket_stream) over a real socket pair: reads are exact
// whatever the sender's write boundaries (several frames in one write, one frame over several),
// through its read-ahead buffer or straight into a long destination, complete later and never
// inside read(), and report the peer closing mid-read.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "transports/common/frame_stream.h"

namespace {

using boost::system::error_code;

class SocketStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    dc::StreamSocket socket(io_, boost::asio::generic::stream_protocol(AF_UNIX, SOCK_STREAM), fds[0]);
    stream_ = dc::make_socket_stream(std::move(socket));
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

TEST_F(SocketStreamTest, FramesInOneWriteReadApartExactly) {
  send("HEADER01payloadHEADER02");
  std::string got;
  ASSERT_FALSE(read(got, 8));
  EXPECT_EQ(got, "HEADER01");
  ASSERT_FALSE(read(got, 7));  // served from what the first recv took
  EXPECT_EQ(got, "payload");
  ASSERT_FALSE(read(got, 8));
  EXPECT_EQ(got, "HEADER02");
}

TEST_F(SocketStreamTest, OneFrameOverSeveralWrites) {
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
TEST_F(SocketStreamTest, LongPayloadAfterItsHeader) {
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

TEST_F(SocketStreamTest, PeerClosingMidReadIsReported) {
  send("HEADER01pay");
  ::close(writer_);
  writer_ = -1;
  std::string got;
  ASSERT_FALSE(read(got, 8));
  EXPECT_EQ(read(got, 7), boost::asio::error::eof);
}

}  // namespace
