#include "tests/fuzz/security/channel_harness.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/log.h"
#include "base/memfd.h"

namespace dc::fuzz {

namespace {

// Nearly every input is a protocol violation, and each would log a warning as the channel closes:
// that output dominated the fuzzers' time. DEEPCOMM_DEBUG=WARN set by hand still shows them.
[[maybe_unused]] const bool kQuiet = [] {
  setenv("DEEPCOMM_DEBUG", "NONE", 0);
  reset_log_level();
  return true;
}();

constexpr size_t kGuard = 64;
constexpr size_t kSizes[] = {0, 1, 100, MessageChannel::kEagerMax, MessageChannel::kEagerMax + 1, 600 << 10};
constexpr size_t kActions = 6;

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "invariant broken: %s\n", what);
  std::abort();
}

class ScriptedStream : public FrameStream {
 public:
  ScriptedStream(boost::asio::io_context& io, const uint8_t* data, size_t size, int fd)
      : io_(io), data_(data), left_(size), fd_(fd) {}

  void read(void* dst, size_t len, Handler done) override {
    boost::system::error_code ec;
    if (closed_) ec = boost::asio::error::operation_aborted;
    else if (len > left_) ec = boost::asio::error::eof;
    else {
      std::memcpy(dst, data_, len);
      data_ += len;
      left_ -= len;
    }
    boost::asio::post(io_, [done = std::move(done), ec] { done(ec); });
  }
  void write(const std::vector<boost::asio::const_buffer>&, int, Handler done) override {
    boost::system::error_code ec;
    if (closed_) ec = boost::asio::error::operation_aborted;
    boost::asio::post(io_, [done = std::move(done), ec] { done(ec); });
  }
  int take_fd() override { return fd_ >= 0 ? duplicate_fd(fd_).release() : -1; }
  void close() override { closed_ = true; }

 private:
  boost::asio::io_context& io_;
  const uint8_t* data_;
  size_t left_;
  int fd_;
  bool closed_ = false;
};

// A posted buffer between guard bytes. The memory is allocated once and reused by every input
// (fresh megabytes per input would cost more than the channel itself).
class Buffer {
 public:
  Buffer() : bytes_(kLargest + 2 * kGuard) {}
  char* use(size_t size) {
    size_ = size;
    std::memset(bytes_.data(), '\x77', kGuard);
    std::memset(bytes_.data() + kGuard + size, '\x77', kGuard);
    return bytes_.data() + kGuard;
  }
  bool guards_intact() const {
    for (size_t i = 0; i < kGuard; ++i)
      if (bytes_[i] != '\x77' || bytes_[kGuard + size_ + i] != '\x77') return false;
    return true;
  }

 private:
  static constexpr size_t kLargest = *std::max_element(std::begin(kSizes), std::end(kSizes));
  std::vector<char> bytes_;
  size_t size_ = 0;
};

}  // namespace

int run_channel(const uint8_t* data, size_t size, const MakeChannel& make, size_t fd_bytes) {
  if (size < kActions) return 0;
  static const UniqueFd memfd = fd_bytes ? create_sealed_memfd("fuzz", fd_bytes, "fuzz") : UniqueFd();
  boost::asio::io_context io;
  auto channel = make(io, std::make_unique<ScriptedStream>(io, data + kActions, size - kActions, memfd.get()));
  static Buffer buffers[kActions];
  std::vector<int> completions(kActions, 0);
  for (size_t i = 0; i < kActions; ++i) {
    const uint8_t a = data[i];
    const size_t len = kSizes[(a >> 1) % std::size(kSizes)];
    const Tag tag{0, 0, uint64_t(a >> 5 & 3)};  // small tags, so that zero-filled frames match
    char* buffer = buffers[i].use(len);
    auto done = [&completions, i](const Status&, size_t) { ++completions[i]; };
    if (a & 1) channel->send(tag, buffer, len, done);
    else channel->recv(tag, buffer, len, done);
  }
  channel->start();
  io.run();  // the stream ends with EOF: the channel closes and every operation completes
  channel->close(Status::failure(dcInternalError, "fuzz input over"));
  io.restart();
  io.run();
  for (size_t i = 0; i < kActions; ++i) {
    if (!buffers[i].guards_intact()) broken("a write outside a posted buffer");
    if (completions[i] != 1) broken("an operation did not complete exactly once");
  }
  return 0;
}

}  // namespace dc::fuzz
