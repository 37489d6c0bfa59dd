// A tag-matching message channel over one byte stream (frame_stream.h: a TCP or Unix socket, or a
// fuzzer's buffer). Sends of up to kEagerMax bytes go inline while the sender holds eager credit (at
// most kEagerWindow unacknowledged bytes per connection, so the receiver buffers a bounded amount of
// unexpected data); everything else goes by rendezvous: RTS -> (receive posted) CTS -> payload
// straight into the receiver's buffer, in Data frames of at most kDataFrameBytes. Answers (CTS,
// returned credit) overtake queued payload, so a transfer in one direction never waits behind the
// other direction's megabytes. The rendezvous payload step is virtual so the shared-memory
// transport can replace it. Runs entirely on one io_context thread; completions are always posted,
// never called inside send()/recv().
//
// The peer proved the unique id's secret before the channel started, but what it sends is still
// checked: every length, offset and id against what this side announced, without overflow; eager
// data beyond the credit window, unexpected announcements beyond kMaxUnexpectedRts, duplicate or
// out-of-order payload frames and unknown ids are protocol errors that close the connection (the
// communicator then fails with the message).
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "base/memfd.h"
#include "transports/common/cancelled_ops.h"
#include "transports/common/eager_credit.h"
#include "transports/common/frame.h"
#include "transports/common/frame_stream.h"
#include "transports/common/op_completions.h"
#include "transports/transport.h"

namespace dc {

class MessageChannel : public std::enable_shared_from_this<MessageChannel> {
 public:
  static constexpr size_t kEagerMax = EagerCredit::kEagerMax;
  // Pieces of a message handed to a PieceSink: small enough to stay in cache while the sink reads.
  static constexpr size_t kPieceBytes = 128 * 1024;
  static constexpr size_t kEagerWindow = EagerCredit::kEagerWindow;
  // A rendezvous payload goes in Data frames of at most this many bytes.
  static constexpr size_t kDataFrameBytes = 256 * 1024;
  // Rendezvous announcements a peer may have waiting for a matching receive here.
  static constexpr size_t kMaxUnexpectedRts = 65536;

  MessageChannel(boost::asio::io_context& io, std::unique_ptr<FrameStream> stream, int peer,
                 const char* transport_name);
  virtual ~MessageChannel() = default;

  // Starts reading frames; call once, after construction, on the io thread.
  void start();
  void send(const Tag& tag, const void* buf, size_t len, Completion done);
  void recv(const Tag& tag, void* buf, size_t capacity, Completion done, PieceSink sink = nullptr);
  void close(const Status& status);
  void flush(std::function<void()> done);
  void cancel(uint64_t comm, uint64_t seq);
  const char* transport_name() const { return transport_name_; }
  virtual TransportCounters counters() const { return completions_.counters(); }
  virtual size_t held_bytes() const { return 0; }     // Connection::held_bytes
  virtual size_t release_idle_memory() { return 0; }  // Connection::release_idle_memory
  boost::asio::io_context& io() { return io_; }

 protected:
  struct SendOp {
    Tag tag;
    const void* buf = nullptr;
    size_t len = 0;
    Completion done;
  };
  struct RecvOp {
    Tag tag;
    void* buf = nullptr;
    size_t capacity = 0;
    size_t expected = 0;  // message length once matched
    size_t received = 0;  // rendezvous bytes placed so far
    Completion done;
    bool discard = false;  // cancelled while its payload is in flight: read it, drop it
    PieceSink sink;        // set: the transport may deliver the rendezvous payload in pieces
    bool reading = false;  // a piece of its payload is being read into buf right now
  };
  using SendPtr = std::shared_ptr<SendOp>;
  using RecvPtr = std::shared_ptr<RecvOp>;

  // Last touch on an RTS before it is queued (the transport may describe the buffer further).
  virtual void describe_rendezvous(FrameHeader&, const void* /*buf*/, size_t /*len*/) {}
  // Whether cancel may drop a rendezvous send whose announcement went out: yes where the peer
  // reads the payload only from a Data frame this side has not queued yet (the default); no where
  // the peer may be reading the sender's memory already (cross-memory attach).
  virtual bool rendezvous_send_droppable() const { return true; }
  // A rendezvous message was matched with `op` (capacity already checked). Default: answer CTS.
  virtual void rendezvous_matched(const RecvPtr& op, const FrameHeader& rts);
  // The receiver is ready for `op`'s payload. Default: one Data frame on the socket.
  virtual void clear_to_send(const SendPtr& op, const FrameHeader& cts);
  // Frame types the base does not know; they carry no payload. Returns false for a protocol error.
  virtual bool handle_extra_frame(const FrameHeader&) { return false; }
  // After close() failed the base's operations: fail the subclass's own.
  virtual void on_closed() {}

  // Answers CTS for a matched rendezvous receive (registers it for Data/Slot frames).
  void answer_cts(const RecvPtr& op, const FrameHeader& rts);
  // Queues a frame. `fd` (a Unix stream only) travels with it; the channel closes it once written.
  void enqueue(const FrameHeader& header, const void* payload, size_t len,
               std::function<void(const Status&)> written = nullptr, UniqueFd fd = UniqueFd());
  SendPtr take_rendezvous_send(uint64_t id);
  RecvPtr find_rendezvous_recv(uint64_t id);
  void erase_rendezvous_recv(uint64_t id);
  void finish_send(const SendPtr& op, const Status& status);
  void finish_recv(const RecvPtr& op, const Status& status, size_t bytes);
  // The buffer a piece lands in before the sink reads it (one per channel, engine thread only).
  char* piece_buffer();
  // Hands bytes readable in place (at `offset` of the message) to the sink, kPieceBytes at a time.
  static void hand_over(const PieceSink& sink, const char* data, size_t offset, size_t len);
  bool closed() const { return closed_; }
  const Status& close_status() const { return close_status_; }
  int peer() const { return peer_; }
  FrameStream& stream() { return *stream_; }
  // Closes the connection: the peer broke the protocol (`what` says how).
  void protocol_error(const std::string& what);

 private:
  struct Unexpected {
    FrameHeader header;         // Eager or Rts
    std::vector<char> payload;  // Eager only
  };
  struct Outgoing {
    FrameHeader header;
    const void* payload;
    size_t len;
    std::function<void(const Status&)> written;
    UniqueFd fd;
  };

  void read_header();
  void on_header();
  void on_eager();
  void on_rts();
  void on_data();
  void read_payload(void* dst, size_t len, std::function<void()> then);
  void read_data(const RecvPtr& op, const FrameHeader& data, size_t done);
  void payload_arrived(const RecvPtr& op, const FrameHeader& data);
  void deliver_eager(const RecvPtr& op, const FrameHeader& header, const char* payload);
  void return_credit(size_t len);
  void match_rts(const RecvPtr& op, const FrameHeader& rts);
  RecvPtr pop_posted(const Tag& tag);
  void fail_mismatched_receives(const Tag& arrived);
  void flush_writes();
  void notify_flushed();
  void fail_from_error(const boost::system::error_code& ec, const char* what);
  void post_completion(Completion done, const Status& status, size_t bytes);

  boost::asio::io_context& io_;
  std::unique_ptr<FrameStream> stream_;
  int peer_;
  const char* transport_name_;
  bool closed_ = false;
  bool write_broken_ = false;  // the peer closed; the reader drains what it sent, then closes
  Status close_status_;

  FrameHeader in_;  // header being read
  std::unordered_map<Tag, std::deque<RecvPtr>, TagHash> posted_;
  std::unordered_map<Tag, std::deque<Unexpected>, TagHash> unexpected_;
  size_t unexpected_rts_ = 0;                               // announcements among them
  std::unordered_map<uint64_t, SendPtr> rendezvous_sends_;  // waiting for CTS/FIN
  std::unordered_set<uint64_t> cancelled_sends_;            // rendezvous sends dropped by cancel: their CTS is ignored
  // Messages of these still arriving are dropped (eager, credit returned) or refused (announcements).
  CancelledOps cancelled_ops_;
  // Answers an announcement with a CTS that refuses it (flags say why; no payload follows).
  void refuse_rts(const FrameHeader& rts, const Tag& tag, uint32_t flags);
  std::unordered_map<uint64_t, RecvPtr> rendezvous_recvs_;  // receiving Data/Slot frames
  RecvPtr eager_in_flight_;                                 // matched to the eager frame whose payload is being read
  uint64_t next_id_ = 1;
  std::unique_ptr<char[]> piece_;

  EagerCredit eager_credit_{sizeof(FrameHeader)};

  std::deque<Outgoing> write_queue_;
  std::vector<Outgoing> writing_;                     // the batch of the one async_write in flight
  std::vector<std::function<void()>> flush_waiters_;  // run when both queues are empty

  OpCompletions completions_{io_};
};

// What a Transport hands out: closes the channel when the last user reference goes away (the
// channel itself lives on in its pending handlers until the socket is closed).
class OwnedConnection : public Connection {
 public:
  explicit OwnedConnection(std::shared_ptr<MessageChannel> channel) : channel_(std::move(channel)) {}
  ~OwnedConnection() override;
  void send(const Tag& tag, const void* buf, size_t len, Completion done) override {
    channel_->send(tag, buf, len, std::move(done));
  }
  void recv(const Tag& tag, void* buf, size_t capacity, Completion done) override {
    channel_->recv(tag, buf, capacity, std::move(done));
  }
  void recv_pieces(const Tag& tag, void* buf, size_t capacity, PieceSink sink, Completion done) override {
    channel_->recv(tag, buf, capacity, std::move(done), std::move(sink));
  }
  void close(const Status& status) override { channel_->close(status); }
  void flush(std::function<void()> done) override { channel_->flush(std::move(done)); }
  void cancel(uint64_t comm, uint64_t seq) override { channel_->cancel(comm, seq); }
  const char* transport_name() const override { return channel_->transport_name(); }
  TransportCounters counters() const override { return channel_->counters(); }
  size_t held_bytes() const override { return channel_->held_bytes(); }
  size_t release_idle_memory() override { return channel_->release_idle_memory(); }
  std::weak_ptr<const void> remains() const override { return channel_; }
  MessageChannel& channel() { return *channel_; }

 private:
  std::shared_ptr<MessageChannel> channel_;
};

}  // namespace dc
