// The order in which a MessageChannel writes its frames, over a stream whose writes complete only
// when the test lets them: a rendezvous payload goes in Data frames of at most kDataFrameBytes,
// an answer to the peer (clear-to-send) overtakes the payload still queued, and a cancel that
// drops queued Data frames ends the send only after the frame being written let go of the buffer.
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "transports/common/frame.h"
#include "transports/common/message_channel.h"

namespace dc {
namespace {

// Reads what the test feeds; records every frame written and holds each write until released.
class HeldStream : public FrameStream {
 public:
  explicit HeldStream(boost::asio::io_context& io) : io_(io) {}

  void read(void* dst, size_t len, Handler done) override {
    pending_read_ = {static_cast<char*>(dst), len, std::move(done)};
    try_read();
  }
  void write(const std::vector<boost::asio::const_buffer>& buffers, int, Handler done) override {
    for (size_t i = 0; i < buffers.size(); ++i) {
      FrameHeader h;
      EXPECT_EQ(buffers[i].size(), sizeof h) << "a frame must start with its header";
      std::memcpy(&h, buffers[i].data(), sizeof h);
      const bool payload = h.type == FrameType::Eager || h.type == FrameType::Data;
      if (payload && h.length) ++i;  // the payload buffer follows its header
      written.push_back(h);
    }
    held_.push_back(std::move(done));
  }
  // Ends the pending read and the held writes as aborted: their handlers hold the channel.
  void close() override {
    const auto aborted = boost::asio::error::operation_aborted;
    if (pending_read_.done) boost::asio::post(io_, [done = std::move(pending_read_.done), aborted] { done(aborted); });
    pending_read_ = {};
    for (auto& done : held_) boost::asio::post(io_, [done = std::move(done), aborted] { done(aborted); });
    held_.clear();
  }

  void feed(const FrameHeader& h) {
    incoming_.append(reinterpret_cast<const char*>(&h), sizeof h);
    try_read();
  }
  // Completes the oldest held write; false when none is held.
  bool release() {
    if (held_.empty()) return false;
    boost::asio::post(io_, [done = std::move(held_.front())] { done({}); });
    held_.pop_front();
    return true;
  }

  std::vector<FrameHeader> written;

 private:
  struct Read {
    char* dst = nullptr;
    size_t len = 0;
    Handler done;
  };
  void try_read() {
    if (!pending_read_.done || incoming_.size() < pending_read_.len) return;
    std::memcpy(pending_read_.dst, incoming_.data(), pending_read_.len);
    incoming_.erase(0, pending_read_.len);
    boost::asio::post(io_, [done = std::move(pending_read_.done)] { done({}); });
    pending_read_ = {};
  }

  boost::asio::io_context& io_;
  std::string incoming_;
  Read pending_read_;
  std::deque<Handler> held_;
};

struct ChannelFixture : ::testing::Test {
  void SetUp() override {
    auto owned = std::make_unique<HeldStream>(io);
    stream = owned.get();
    channel = std::make_shared<MessageChannel>(io, std::move(owned), 1, "test");
    channel->start();
  }
  void TearDown() override {
    channel->close(Status::failure(dcInternalError, "test over"));
    settle();
  }
  void settle() {
    io.restart();
    io.poll();
  }
  // Sends `out` (announced by RTS) and lets the peer answer CTS: its Data frames are queued and the
  // first one is being written (held).
  void send_until_first_data(const Tag& tag) {
    channel->send(tag, out.data(), out.size(), [this](const Status& s, size_t) {
      ++send_ends;
      send_status = s;
    });
    settle();
    ASSERT_EQ(stream->written.size(), 1u);
    const FrameHeader rts = stream->written[0];
    ASSERT_EQ(rts.type, FrameType::Rts);
    ASSERT_TRUE(stream->release());
    FrameHeader cts;
    cts.type = FrameType::Cts;
    cts.tag = tag;
    cts.length = rts.length;
    cts.id = rts.id;
    cts.aux = 77;  // the peer's receive id, echoed in every Data frame
    stream->feed(cts);
    settle();
    ASSERT_EQ(stream->written.size(), 2u);
    ASSERT_EQ(stream->written[1].type, FrameType::Data);
  }

  boost::asio::io_context io;
  HeldStream* stream = nullptr;
  std::shared_ptr<MessageChannel> channel;
  std::vector<char> out = std::vector<char>(4 * MessageChannel::kDataFrameBytes, 'x');
  int send_ends = 0;
  Status send_status;
};

TEST_F(ChannelFixture, PayloadGoesInDataFramesAndAnswersOvertakeIt) {
  const Tag mine{5, 1, 0}, theirs{5, 1, 1};
  std::vector<char> in(2 * MessageChannel::kDataFrameBytes);
  int recv_ends = 0;
  channel->recv(theirs, in.data(), in.size(), [&](const Status&, size_t) { ++recv_ends; });
  send_until_first_data(mine);

  // While the first Data frame is being written, the peer announces a message for the posted
  // receive: its CTS must go out before the rest of this side's payload.
  FrameHeader rts;
  rts.type = FrameType::Rts;
  rts.tag = theirs;
  rts.length = in.size();
  rts.id = 9;
  stream->feed(rts);
  settle();
  while (stream->release()) settle();

  auto data = [](uint64_t offset, uint64_t length) {
    return "Data@" + std::to_string(offset) + "+" + std::to_string(length);
  };
  std::vector<std::string> order;
  for (const FrameHeader& h : stream->written) {
    if (h.type == FrameType::Data) order.push_back(data(h.offset, h.length));
    else order.push_back(h.type == FrameType::Cts ? "Cts" : h.type == FrameType::Rts ? "Rts" : "other");
  }
  const uint64_t frame = MessageChannel::kDataFrameBytes;
  const std::vector<std::string> expected = {
      "Rts", data(0, frame), "Cts", data(frame, frame), data(2 * frame, frame), data(3 * frame, frame)};
  EXPECT_EQ(order, expected);
  for (const FrameHeader& h : stream->written)
    if (h.type == FrameType::Data) EXPECT_EQ(h.id, 77u);
  EXPECT_EQ(send_ends, 1);
  EXPECT_TRUE(send_status.ok()) << send_status.message;
  EXPECT_EQ(recv_ends, 0);  // its payload has not arrived
}

TEST_F(ChannelFixture, SendEndsOnlyWhenEveryDataFrameWroteOrWasDropped) {
  const Tag mine{6, 2, 0};
  send_until_first_data(mine);
  ASSERT_TRUE(stream->release());  // the first frame written; the second one is held now
  settle();
  EXPECT_EQ(send_ends, 0);
  ASSERT_EQ(stream->written.size(), 3u);

  // The cancel drops the two frames still queued, but the held one still reads the buffer.
  channel->cancel(6, 2);
  settle();
  EXPECT_EQ(send_ends, 0) << "the send ended while a Data frame was being written from its buffer";
  ASSERT_TRUE(stream->release());
  settle();
  EXPECT_EQ(send_ends, 1);
  EXPECT_FALSE(send_status.ok());
  EXPECT_EQ(stream->written.size(), 3u);  // nothing more of the cancelled message went out
}

}  // namespace
}  // namespace dc
