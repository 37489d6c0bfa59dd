// A peer that proved the secret but then breaks the frame protocol, played from the raw end of a
// socket pair against a real channel: lengths and offsets that wrap around 2^64, duplicate and
// out-of-order payload frames, unknown ids, excess credit, eager data beyond the window, too many
// unexpected announcements, and forged memory notices (no descriptor, an unsealed or short memfd,
// a second notice for a live mapping, a flood of stray descriptors). Each must close the
// connection with a protocol error, never write outside the posted buffer, and leak no descriptor.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "base/memfd.h"
#include "base/scm_rights.h"
#include "tests/security/strangers.h"
#include "tests/transports/two_ranks.h"
#include "transports/common/frame_stream.h"
#include "transports/common/message_channel.h"
#include "transports/shm/shm_channel.h"

namespace dc::test {
namespace {

constexpr size_t kBuffer = 1 << 20;
constexpr size_t kGuard = 4096;
const Tag kTag{11, 22, 33};

// The channel under test on one end of a socket pair; the test writes the other end by hand.
class RawPeer {
 public:
  explicit RawPeer(bool shm) {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    raw_ = fds[1];
    timeval tv{5, 0};
    setsockopt(raw_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    io_.call([&] {
      StreamSocket socket(io_.io(), boost::asio::generic::stream_protocol(AF_UNIX, SOCK_STREAM), fds[0]);
      if (shm) {
        channel_ = std::make_shared<ShmChannel>(io_.io(), make_unix_fd_stream(std::move(socket)), 1, getpid(),
                                                std::make_shared<ShmRegions>(), false);
      } else {
        channel_ = std::make_shared<MessageChannel>(io_.io(), make_socket_stream(std::move(socket)), 1, "tcp");
      }
      channel_->start();
    });
    // The receive buffer sits between two guard areas that must stay untouched.
    memory_.assign(kGuard + kBuffer + kGuard, '\x5a');
  }
  ~RawPeer() {
    io_.call([&] { channel_->close(Status::failure(dcInternalError, "test over")); });
    ::close(raw_);
  }

  char* buffer() { return memory_.data() + kGuard; }
  bool guards_intact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (memory_[i] != '\x5a' || memory_[kGuard + kBuffer + i] != '\x5a') return false;
    return true;
  }

  PendingOp recv(const Tag& tag = kTag, size_t capacity = kBuffer) {
    PendingOp op;
    io_.call([&] { channel_->recv(tag, buffer(), capacity, op.completion()); });
    return op;
  }
  PendingOp send(const void* data, size_t len) {
    PendingOp op;
    io_.call([&] { channel_->send(kTag, data, len, op.completion()); });
    return op;
  }

  void write_frame(FrameType type, uint64_t length = 0, uint64_t id = 0, uint64_t offset = 0, uint64_t aux = 0,
                   const Tag& tag = kTag, int fd = -1) {
    ASSERT_TRUE(try_write_frame(type, length, id, offset, aux, tag, fd));
  }
  // A frame of a flood: the channel may have closed the connection at an earlier frame already.
  bool try_write_frame(FrameType type, uint64_t length = 0, uint64_t id = 0, uint64_t offset = 0, uint64_t aux = 0,
                       const Tag& tag = kTag, int fd = -1) {
    FrameHeader h;
    h.type = type;
    h.tag = tag;
    h.length = length;
    h.id = id;
    h.offset = offset;
    h.aux = aux;
    iovec iov{&h, sizeof h};
    alignas(cmsghdr) char control[kOneFdControlBytes];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) attach_fd(msg, control, fd);
    return sendmsg(raw_, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof h);
  }
  // Payload bytes; the channel may already have closed the connection over the frame before them.
  void write_bytes(const void* data, size_t len) { (void)::send(raw_, data, len, MSG_NOSIGNAL); }
  // The peer dies: its end of the socket closes.
  void hang_up() { ::shutdown(raw_, SHUT_RDWR); }
  // The next frame the channel wrote (skipping payloads is the test's business).
  FrameHeader read_frame() {
    FrameHeader h;
    size_t got = 0;
    while (got < sizeof h) {
      const ssize_t n = ::recv(raw_, reinterpret_cast<char*>(&h) + got, sizeof h - got, 0);
      if (n <= 0) return FrameHeader{};
      got += static_cast<size_t>(n);
    }
    return h;
  }
  // Announces a rendezvous of `length` and returns the receiver's id from its CTS.
  uint64_t rendezvous(uint64_t length) {
    write_frame(FrameType::Rts, length, 7);
    const FrameHeader cts = read_frame();
    EXPECT_EQ(cts.type, FrameType::Cts);
    return cts.aux;
  }

 private:
  RankIo io_;
  int raw_ = -1;
  std::shared_ptr<MessageChannel> channel_;
  std::vector<char> memory_;
};

void expect_protocol_error(const OpResult& r, const char* what) {
  EXPECT_EQ(r.status.code, dcRemoteError) << what << ": " << describe(r);
  EXPECT_NE(r.status.message.find("protocol error"), std::string::npos) << what << ": " << r.status.message;
}

TEST(ProtocolViolations, DataOffsetWrappingAroundIsRefused) {
  RawPeer peer(false);
  PendingOp r = peer.recv();
  const uint64_t id = peer.rendezvous(kBuffer);
  // offset + length = 2^64 + 16: it once passed the bounds check and wrote 16 bytes before the buffer.
  peer.write_frame(FrameType::Data, 32, id, ~uint64_t(0) - 15);
  std::vector<char> payload(32, 'X');
  peer.write_bytes(payload.data(), payload.size());
  expect_protocol_error(r.wait(), "wrapping Data frame");
  EXPECT_TRUE(peer.guards_intact());
}

// Found by message_channel_fuzzer: a receive matched to an eager frame whose payload never came
// (the peer died in the middle) was in no queue and never completed, so its caller waited for the
// progress deadline instead of learning of the death at once.
TEST(ProtocolViolations, PeerDyingInsideAnEagerPayloadEndsTheReceive) {
  for (size_t capacity : {size_t(100), size_t(10)}) {  // straight into the buffer, and too long for it
    RawPeer peer(false);
    PendingOp r = peer.recv(Tag{4, 4, 4}, capacity);
    peer.write_frame(FrameType::Eager, 100, 0, 0, 0, Tag{4, 4, 4});
    peer.write_bytes("only ten b", 10);
    peer.hang_up();
    const OpResult got = r.wait(2000);
    EXPECT_EQ(got.status.code, dcRemoteError) << "capacity " << capacity << ": " << describe(got);
  }
}

TEST(ProtocolViolations, DuplicateDataFrameIsRefused) {
  RawPeer peer(false);
  PendingOp r = peer.recv();
  const uint64_t id = peer.rendezvous(kBuffer);
  std::vector<char> half(kBuffer / 2, 'Y');
  peer.write_frame(FrameType::Data, half.size(), id, 0);
  peer.write_bytes(half.data(), half.size());
  peer.write_frame(FrameType::Data, half.size(), id, 0);  // the same half again
  expect_protocol_error(r.wait(), "duplicate Data frame");
  EXPECT_TRUE(peer.guards_intact());
}

TEST(ProtocolViolations, UnknownIdsAndExcessCreditAreRefused) {
  {
    RawPeer peer(false);
    PendingOp r = peer.recv(Tag{1, 1, 1});
    peer.write_frame(FrameType::Data, 8, 999);
    expect_protocol_error(r.wait(), "Data for an unknown receive");
  }
  {
    RawPeer peer(false);
    PendingOp r = peer.recv(Tag{1, 1, 1});
    peer.write_frame(FrameType::Cts, 0, 12345);
    expect_protocol_error(r.wait(), "CTS for an unknown send");
  }
  {
    RawPeer peer(false);
    PendingOp r = peer.recv(Tag{1, 1, 1});
    peer.write_frame(FrameType::Credit, 4096);
    expect_protocol_error(r.wait(), "credit never used");
  }
  {
    RawPeer peer(false);
    PendingOp r = peer.recv(Tag{1, 1, 1});
    peer.write_frame(static_cast<FrameType>(77));
    expect_protocol_error(r.wait(), "unknown frame type");
  }
}

TEST(ProtocolViolations, EagerDataBeyondTheWindowIsRefused) {
  RawPeer peer(false);
  PendingOp r = peer.recv(Tag{1, 1, 1});  // never matched: everything below is unexpected
  std::vector<char> payload(MessageChannel::kEagerMax, 'E');
  const size_t frames = MessageChannel::kEagerWindow / MessageChannel::kEagerMax + 1;
  // Each frame costs its header too, so the channel refuses one frame before the last and may
  // have closed the connection when the last one is written.
  for (size_t i = 0; i < frames; ++i) {
    if (!peer.try_write_frame(FrameType::Eager, payload.size(), 0, 0, 0, Tag{2, i, 0})) break;
    peer.write_bytes(payload.data(), payload.size());
  }
  expect_protocol_error(r.wait(), "eager flood");
}

TEST(ProtocolViolations, UnexpectedAnnouncementsAreBounded) {
  RawPeer peer(false);
  PendingOp r = peer.recv(Tag{1, 1, 1});
  for (size_t i = 0; i <= MessageChannel::kMaxUnexpectedRts; ++i)
    if (!peer.try_write_frame(FrameType::Rts, 1 << 20, i, 0, 0, Tag{3, i, 0})) break;
  expect_protocol_error(r.wait(), "RTS flood");
}

TEST(ProtocolViolations, ShmSlotOffsetWrappingAroundIsRefused) {
  RawPeer peer(true);
  PendingOp r = peer.recv();
  const uint64_t id = peer.rendezvous(kBuffer);
  UniqueFd segment = create_sealed_memfd("test", ShmSegment::kBytes, "test segment");
  peer.write_frame(FrameType::Memory, ShmSegment::kBytes, 0, 0, uint64_t(MemoryKind::Segment), kTag, segment.get());
  peer.write_frame(FrameType::Slot, 32, id, ~uint64_t(0) - 15, 0);
  expect_protocol_error(r.wait(), "wrapping Slot frame");
  EXPECT_TRUE(peer.guards_intact());
}

TEST(ProtocolViolations, ShmSlotWithoutSegmentAndStrayReturnsAreRefused) {
  {
    RawPeer peer(true);
    PendingOp r = peer.recv();
    const uint64_t id = peer.rendezvous(kBuffer);
    peer.write_frame(FrameType::Slot, 32, id, 0, 0);
    expect_protocol_error(r.wait(), "slot without a segment");
  }
  {
    RawPeer peer(true);
    PendingOp r = peer.recv(Tag{1, 1, 1});
    peer.write_frame(FrameType::SlotFree, 0, 0, 0, 3);
    expect_protocol_error(r.wait(), "a slot never used returned");
  }
  {
    RawPeer peer(true);
    PendingOp r = peer.recv(Tag{1, 1, 1});
    peer.write_frame(FrameType::Fin, 0, 4242);
    expect_protocol_error(r.wait(), "FIN for an unknown send");
  }
}

TEST(ProtocolViolations, ForgedMemoryNoticesAreRefused) {
  const int fds_before = open_fds();
  {
    RawPeer peer(true);
    PendingOp r = peer.recv(Tag{1, 1, 1});
    peer.write_frame(FrameType::Memory, 4096, 1, 0, uint64_t(MemoryKind::Region));
    expect_protocol_error(r.wait(), "notice without a descriptor");
  }
  {
    // Unsealed: the sender could shrink it under the receiver's mapping (SIGBUS).
    RawPeer peer(true);
    PendingOp r = peer.recv(Tag{1, 1, 1});
    UniqueFd unsealed(memfd_create("unsealed", MFD_CLOEXEC));
    ASSERT_EQ(ftruncate(unsealed.get(), 1 << 20), 0);
    peer.write_frame(FrameType::Memory, 1 << 20, 1, 0, uint64_t(MemoryKind::Region), kTag, unsealed.get());
    OpResult got = r.wait();
    expect_protocol_error(got, "unsealed memfd");
    EXPECT_NE(got.status.message.find("not sealed"), std::string::npos) << got.status.message;
  }
  {
    // Sealed, but smaller than the notice claims.
    RawPeer peer(true);
    PendingOp r = peer.recv(Tag{1, 1, 1});
    UniqueFd small = create_sealed_memfd("test", 4096, "small");
    peer.write_frame(FrameType::Memory, 1 << 30, 1, 0, uint64_t(MemoryKind::Region), kTag, small.get());
    OpResult got = r.wait();
    expect_protocol_error(got, "short memfd");
    EXPECT_NE(got.status.message.find("holds 4096 bytes"), std::string::npos) << got.status.message;
  }
  {
    // A second notice for a region already mapped never replaces the mapping.
    RawPeer peer(true);
    PendingOp r = peer.recv(Tag{1, 1, 1});
    UniqueFd first = create_sealed_memfd("test", 8192, "first"), second = create_sealed_memfd("test", 8192, "second");
    peer.write_frame(FrameType::Memory, 8192, 5, 0x1000, uint64_t(MemoryKind::Region), kTag, first.get());
    peer.write_frame(FrameType::Memory, 8192, 5, 0x1000, uint64_t(MemoryKind::Region), kTag, second.get());
    expect_protocol_error(r.wait(), "second region notice");
  }
  {
    // Descriptors without notices: at most a few wait, the rest are closed on arrival.
    RawPeer peer(true);
    UniqueFd spare = create_sealed_memfd("test", 4096, "spare");
    for (int i = 0; i < 64; ++i) peer.write_frame(FrameType::Credit, 0, 0, 0, 0, kTag, spare.get());
    PendingOp s = peer.send("x", 1);  // the channel still works: zero credit is harmless
    EXPECT_TRUE(s.wait().status.ok());
  }
  EXPECT_LE(open_fds(), fds_before + 1) << "descriptors leaked by refused notices";
}

}  // namespace
}  // namespace dc::test
