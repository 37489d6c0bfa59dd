#include "transports/self/self_connection.h"

#include <boost/asio/post.hpp>
#include <cstring>
#include <deque>
#include <unordered_map>

namespace dc {

namespace {

class SelfConnection : public Connection {
 public:
  explicit SelfConnection(boost::asio::io_context& io) : io_(io) {}

  void send(const Tag& tag, const void* buf, size_t len, Completion done) override {
    if (!closed_.ok()) return post(std::move(done), closed_, 0);
    auto& recvs = recvs_[tag];
    if (recvs.empty()) {
      sends_[tag].push_back({tag, buf, len, std::move(done)});
      return;
    }
    PendingRecv r = std::move(recvs.front());
    recvs.pop_front();
    if (recvs.empty()) recvs_.erase(tag);
    match({tag, buf, len, std::move(done)}, std::move(r));
  }

  void recv(const Tag& tag, void* buf, size_t capacity, Completion done) override {
    if (!closed_.ok()) return post(std::move(done), closed_, 0);
    auto& sends = sends_[tag];
    if (sends.empty()) {
      sends_.erase(tag);
      recvs_[tag].push_back({tag, buf, capacity, std::move(done)});
      return;
    }
    PendingSend s = std::move(sends.front());
    sends.pop_front();
    if (sends.empty()) sends_.erase(tag);
    match(std::move(s), {tag, buf, capacity, std::move(done)});
  }

  void close(const Status& status) override {
    closed_ = status.ok() ? Status::failure(dcInvalidUsage, "DeepComm: connection closed") : status;
    for (auto& [tag, q] : sends_)
      for (auto& s : q) post(std::move(s.done), closed_, 0);
    for (auto& [tag, q] : recvs_)
      for (auto& r : q) post(std::move(r.done), closed_, 0);
    sends_.clear();
    recvs_.clear();
  }

  void flush(std::function<void()> done) override { boost::asio::post(io_, std::move(done)); }

  void cancel(uint64_t comm, uint64_t seq) override {
    for (auto it = recvs_.begin(); it != recvs_.end();) {
      if (it->first.comm != comm || it->first.seq != seq) {
        ++it;
        continue;
      }
      for (auto& r : it->second) post(std::move(r.done), receive_cancelled(), 0);
      it = recvs_.erase(it);
    }
  }
  const char* transport_name() const override { return "self"; }
  TransportCounters counters() const override { return counters_; }

 private:
  struct PendingSend {
    Tag tag;
    const void* buf;
    size_t len;
    Completion done;
  };
  struct PendingRecv {
    Tag tag;
    void* buf;
    size_t capacity;
    Completion done;
  };

  void match(PendingSend s, PendingRecv r) {
    if (signatures_differ(s.tag, r.tag)) {
      post(std::move(s.done), signature_mismatch(r.tag.check), 0);
      post(std::move(r.done), signature_mismatch(s.tag.check), 0);
      return;
    }
    if (s.len > r.capacity) {
      const Status too_long = message_too_long(s.len, r.capacity);
      post(std::move(s.done), too_long, 0);
      post(std::move(r.done), too_long, 0);
      return;
    }
    if (s.len && s.buf != r.buf) std::memmove(r.buf, s.buf, s.len);
    counters_.bytes_sent += s.len;
    counters_.bytes_received += s.len;
    post(std::move(s.done), Status::success(), s.len);
    post(std::move(r.done), Status::success(), s.len);
  }

  void post(Completion done, const Status& status, size_t bytes) {
    boost::asio::post(io_, [done = std::move(done), status, bytes] { done(status, bytes); });
  }

  boost::asio::io_context& io_;
  Status closed_;
  std::unordered_map<Tag, std::deque<PendingSend>, TagHash> sends_;
  std::unordered_map<Tag, std::deque<PendingRecv>, TagHash> recvs_;
  TransportCounters counters_;
};

}  // namespace

std::shared_ptr<Connection> make_self_connection(boost::asio::io_context& io) {
  return std::make_shared<SelfConnection>(io);
}

}  // namespace dc
