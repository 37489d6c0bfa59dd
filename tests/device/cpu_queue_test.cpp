// The CPU device queue against its contract (device/device_queue.h): every step kind gives what
// the kernels and codecs give when called directly (bit for bit), element steps end inside post(),
// codec steps complete later through poll() and the completion descriptor, a stream runs and
// completes its steps in post order, the queue copies the step descriptor at post, and bad input
// ends with an error status.
#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <cstring>
#include <random>
#include <vector>

#include "compression/compression.h"
#include "device/cpu_queue.h"
#include "kernels/reduce.h"

namespace dc::device {
namespace {

using Clock = std::chrono::steady_clock;

// Completions seen, in the order poll() ran them.
struct Seen {
  std::vector<uint64_t> tags;
  std::vector<Status> statuses;
  static void record(void* seen, uint64_t tag, const Status& status) {
    static_cast<Seen*>(seen)->tags.push_back(tag);
    static_cast<Seen*>(seen)->statuses.push_back(status);
  }
  Completion completion(uint64_t tag) { return Completion{&Seen::record, this, tag}; }
};

bool readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

// Waits on the completion descriptor (never spinning) and polls until `count` completions ran or
// 10 s passed.
void wait_for(CpuQueue& queue, Seen& seen, size_t count) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (seen.tags.size() < count && Clock::now() < deadline) {
    if (readable(queue.completion_fd(), 100)) queue.poll();
  }
  ASSERT_EQ(seen.tags.size(), count) << "completions missing after 10 s";
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(CpuQueue, ElementStepsEndAtPostWithTheKernelsResults) {
  CpuQueue queue(1);
  EXPECT_TRUE(queue.element_steps_end_at_post());
  const size_t n = 1000;
  const std::vector<float> a = random_floats(n, 1), b = random_floats(n, 2);
  for (dcDataType_t type : {dcFloat32, dcFloat16, dcBfloat16, dcInt32, dcFloat8e4m3}) {
    const size_t size = datatype_size(type);
    std::vector<uint8_t> x(n * size), y(n * size), got(n * size), want(n * size);
    std::memcpy(x.data(), a.data(), x.size());  // any bit patterns of the type
    std::memcpy(y.data(), b.data(), y.size());
    Seen seen;
    for (dcRedOp_t op : {dcSum, dcProd, dcMin, dcMax}) {
      Posted p = queue.post(LocalStep::reduce(type, op, got.data(), x.data(), y.data(), n), {}, seen.completion(1));
      reduce(type, op, want.data(), x.data(), y.data(), n);
      ASSERT_TRUE(p.done);
      ASSERT_TRUE(p.status.ok()) << p.status.message;
      EXPECT_EQ(got, want) << datatype_name(type) << " " << redop_name(op);
    }
    uint8_t scalar[8] = {};
    std::memcpy(scalar, y.data(), size);
    Posted p = queue.post(LocalStep::premultiply(type, got.data(), x.data(), n, scalar), {}, seen.completion(2));
    premultiply(type, want.data(), x.data(), n, scalar);
    ASSERT_TRUE(p.done && p.status.ok());
    EXPECT_EQ(got, want) << datatype_name(type) << " premultiply";
    want = got;
    p = queue.post(LocalStep::finalize_avg(type, got.data(), n, 3), {}, seen.completion(3));
    finalize_avg(type, want.data(), n, 3);
    ASSERT_TRUE(p.done && p.status.ok());
    EXPECT_EQ(got, want) << datatype_name(type) << " finalize";
    p = queue.post(LocalStep::copy(got.data(), y.data(), y.size()), {}, seen.completion(4));
    ASSERT_TRUE(p.done && p.status.ok());
    EXPECT_EQ(got, y);
    EXPECT_TRUE(seen.tags.empty()) << "a step that ended in post() also completed later";
  }
  EXPECT_FALSE(queue.has_completions());
  EXPECT_FALSE(readable(queue.completion_fd(), 0));
}

TEST(CpuQueue, CopyMayOverlap) {
  CpuQueue queue(1);
  std::vector<uint8_t> buf(100);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint8_t(i);
  Posted p = queue.post(LocalStep::copy(buf.data() + 10, buf.data(), 50), {}, {});
  ASSERT_TRUE(p.done && p.status.ok());
  for (size_t i = 0; i < 50; ++i) ASSERT_EQ(buf[10 + i], uint8_t(i));
}

TEST(CpuQueue, BadInputEndsWithAnError) {
  CpuQueue queue(1);
  float x[4] = {}, y[4] = {};
  Posted p = queue.post(LocalStep::reduce(static_cast<dcDataType_t>(99), dcSum, x, x, y, 4), {}, {});
  ASSERT_TRUE(p.done);
  EXPECT_EQ(p.status.code, dcInvalidArgument);
  EXPECT_NE(p.status.message.find("datatype"), std::string::npos) << p.status.message;
  LocalStep odd = LocalStep::copy(x, y, sizeof x);
  odd.kind = static_cast<StepKind>(42);
  p = queue.post(odd, {}, {});
  ASSERT_TRUE(p.done);
  EXPECT_EQ(p.status.code, dcInvalidArgument);
  // A decode of bytes that are no message: the sender's fault, reported through the completion.
  std::vector<uint8_t> garbage(64, 0xab);
  std::vector<float> out(16);
  Seen seen;
  DecodeStep d;
  d.message = garbage;
  d.target = {dcFloat32, out.data(), out.size()};
  p = queue.post(LocalStep::decode_step(StepKind::Decode, d), {}, seen.completion(5));
  ASSERT_FALSE(p.done);
  wait_for(queue, seen, 1);
  EXPECT_EQ(seen.statuses[0].code, dcRemoteError) << seen.statuses[0].message;
}

// Encode and decode of one buffer through the queue and directly: the same bytes, the same sums.
TEST(CpuQueue, CodecStepsCompleteThroughTheDescriptorWithTheCodecsResults) {
  CpuQueue queue(2);
  const size_t n = 100000;
  const std::vector<float> x = random_floats(n, 3);
  const compression::Spec spec = compression::parse_spec("topk:0.01,q8,huffman");
  const size_t capacity = compression::max_message_bytes(spec, n);
  std::vector<uint8_t> message(capacity), direct(capacity);
  compression::EncodeResult result;
  EncodeStep e;
  e.spec = spec;
  e.seed = 7;
  e.out = message;
  e.result = &result;
  Seen seen;
  Posted p = queue.post(LocalStep::encode_step(dcFloat32, x.data(), n, e), {}, seen.completion(10));
  ASSERT_FALSE(p.done) << "an encode ran on the posting thread";
  wait_for(queue, seen, 1);
  ASSERT_TRUE(seen.statuses[0].ok()) << seen.statuses[0].message;
  EXPECT_FALSE(readable(queue.completion_fd(), 0)) << "poll() left the descriptor readable";
  compression::Encoder encoder;
  const compression::EncodeResult want = encoder.encode(spec, dcFloat32, x.data(), n, std::span<float>(), 7, direct);
  ASSERT_EQ(result.bytes, want.bytes);
  EXPECT_EQ(0, std::memcmp(message.data(), direct.data(), want.bytes));

  std::vector<float> sum(n, 1.0f), want_sum(n, 1.0f);
  DecodeTimes times{-1, -1};
  DecodeStep d;
  d.message = {message.data(), result.bytes};
  d.target = {dcFloat32, sum.data(), n};
  d.times = &times;
  p = queue.post(LocalStep::decode_step(StepKind::Decode, d), {}, seen.completion(11));
  ASSERT_FALSE(p.done);
  wait_for(queue, seen, 2);
  ASSERT_TRUE(seen.statuses[1].ok()) << seen.statuses[1].message;
  compression::decode_accumulate({direct.data(), want.bytes}, {dcFloat32, want_sum.data(), n});
  EXPECT_EQ(0, std::memcmp(sum.data(), want_sum.data(), n * sizeof(float)));
  EXPECT_GE(times.decode_seconds, 0);
  EXPECT_GE(times.accumulate_seconds, 0);
}

// The bytes of a message fed in pieces decode to what the whole message decodes to; the step ends
// only after the receive's end was fed.
TEST(CpuQueue, DecodeWhileArriving) {
  CpuQueue queue(1);
  const size_t n = 300000;
  const std::vector<float> x = random_floats(n, 4);
  const compression::Spec spec = compression::parse_spec("q8,chunk:4096");
  std::vector<uint8_t> message(compression::max_message_bytes(spec, n));
  compression::Encoder encoder;
  const size_t bytes = encoder.encode(spec, dcFloat32, x.data(), n, std::span<float>(), 1, message).bytes;
  std::vector<float> want(n, 0.f);
  compression::decode_accumulate({message.data(), bytes}, {dcFloat32, want.data(), n});

  for (const bool truncated : {false, true}) {
    std::vector<uint8_t> staging(message.size());
    std::vector<float> got(n, 0.f);
    DecodeStep d;
    d.message = staging;
    d.target = {dcFloat32, got.data(), n};
    Seen seen;
    Posted p = queue.post(LocalStep::decode_step(StepKind::DecodeArriving, d), {}, seen.completion(20));
    ASSERT_FALSE(p.done);
    const size_t end = truncated ? bytes - 100 : bytes;
    for (size_t at = 0; at < end; at += 10000) {
      const size_t len = std::min<size_t>(10000, end - at);
      std::memcpy(staging.data() + at, message.data() + at, len);
      queue.feed(p.id, at + len, nullptr);
    }
    // Not ended before the receive's end was fed, even when every byte was used.
    EXPECT_FALSE(readable(queue.completion_fd(), 200));
    queue.poll();
    EXPECT_TRUE(seen.tags.empty());
    const Status received = Status::success();
    queue.feed(p.id, end, &received);
    wait_for(queue, seen, 1);
    if (truncated) {
      EXPECT_EQ(seen.statuses[0].code, dcRemoteError) << "a truncated message decoded";
    } else {
      ASSERT_TRUE(seen.statuses[0].ok()) << seen.statuses[0].message;
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), n * sizeof(float)));
    }
  }
  // The receive's failure is the step's.
  std::vector<uint8_t> staging(64);
  std::vector<float> got(4);
  DecodeStep d;
  d.message = staging;
  d.target = {dcFloat32, got.data(), got.size()};
  Seen seen;
  Posted p = queue.post(LocalStep::decode_step(StepKind::DecodeArriving, d), {}, seen.completion(21));
  const Status failed = Status::failure(dcSystemError, "peer gone");
  queue.feed(p.id, 0, &failed);
  wait_for(queue, seen, 1);
  EXPECT_EQ(seen.statuses[0].code, dcSystemError);
  EXPECT_EQ(seen.statuses[0].message, "peer gone");
}

// Steps of one stream run one after another and complete in post order, although the queue has
// several workers; an element step behind a pending one waits its turn instead of ending in post().
TEST(CpuQueue, AStreamRunsAndCompletesInPostOrder) {
  CpuQueue queue(4);
  const size_t n = 200000;
  const std::vector<float> x = random_floats(n, 5);
  const compression::Spec spec = compression::parse_spec("q8,huffman");
  std::vector<uint8_t> message(compression::max_message_bytes(spec, n));
  compression::EncodeResult result;
  EncodeStep e;
  e.spec = spec;
  e.out = message;
  e.result = &result;
  Seen seen;
  const Stream stream{7};
  ASSERT_FALSE(queue.post(LocalStep::encode_step(dcFloat32, x.data(), n, e), stream, seen.completion(0)).done);
  // Each step copies the previous step's output (the message's first bytes, then a chain of copies).
  const int chain = 40;
  std::vector<std::vector<uint8_t>> links(chain + 1, std::vector<uint8_t>(64, 0));
  for (int i = 0; i < chain; ++i) {
    const void* from = i == 0 ? static_cast<const void*>(message.data()) : links[i].data();
    Posted p = queue.post(LocalStep::copy(links[i + 1].data(), from, 64), stream, seen.completion(i + 1));
    ASSERT_FALSE(p.done) << "step " << i + 1 << " ended before the steps posted before it";
  }
  // A step without a stream is not held up by it.
  float a = 1, b = 2, c = 0;
  ASSERT_TRUE(queue.post(LocalStep::reduce(dcFloat32, dcSum, &c, &a, &b, 1), {}, {}).done);
  EXPECT_EQ(c, 3.f);
  wait_for(queue, seen, chain + 1);
  for (int i = 0; i <= chain; ++i) {
    EXPECT_EQ(seen.tags[i], uint64_t(i));
    EXPECT_TRUE(seen.statuses[i].ok()) << seen.statuses[i].message;
  }
  ASSERT_GT(result.bytes, 64u);
  EXPECT_EQ(0, std::memcmp(links[chain].data(), message.data(), 64)) << "a copy ran before the step it follows";
  // Delivered and idle: the next element step on the stream ends in post() again.
  EXPECT_TRUE(queue.post(LocalStep::copy(&c, &a, sizeof a), stream, seen.completion(99)).done);
}

// The queue copies the descriptor at post: changing it afterwards changes nothing. The outputs the
// step writes are written before its completion runs.
TEST(CpuQueue, TheDescriptorIsCopiedAtPostAndOutputsAreWrittenBeforeCompletion) {
  CpuQueue queue(1);
  const size_t n = 50000;
  const std::vector<float> x = random_floats(n, 6), other = random_floats(n, 7);
  const compression::Spec spec = compression::parse_spec("q8");
  std::vector<uint8_t> message(compression::max_message_bytes(spec, n));
  compression::EncodeResult result;
  EncodeStep e;
  e.spec = spec;
  e.out = message;
  e.result = &result;
  LocalStep step = LocalStep::encode_step(dcFloat32, x.data(), n, e);
  bool result_written_at_completion = false;
  struct Check {
    compression::EncodeResult* result;
    bool* written;
    static void done(void* self, uint64_t, const Status&) {
      auto* c = static_cast<Check*>(self);
      *c->written = c->result->bytes > 0;
    }
  } check{&result, &result_written_at_completion};
  ASSERT_FALSE(queue.post(step, {}, Completion{&Check::done, &check, 0}).done);
  step.src = other.data();  // too late to matter
  step.count = 1;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!queue.poll() && Clock::now() < deadline) readable(queue.completion_fd(), 100);
  EXPECT_TRUE(result_written_at_completion);
  std::vector<uint8_t> want(message.size());
  compression::Encoder encoder;
  const size_t bytes = encoder.encode(spec, dcFloat32, x.data(), n, std::span<float>(), 0, want).bytes;
  ASSERT_EQ(result.bytes, bytes);
  EXPECT_EQ(0, std::memcmp(message.data(), want.data(), bytes));
}

}  // namespace
}  // namespace dc::device
