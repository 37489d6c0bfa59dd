#include "tests/transports/scenarios.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "transports/common/message_channel.h"

namespace dc::test {

namespace {

constexpr size_t kEagerMax = MessageChannel::kEagerMax;
constexpr size_t kBig = 64u << 20;

uint64_t seed_of(int sender, uint64_t step, uint64_t index) { return sender * 1000003ull + step * 1009 + index; }

}  // namespace

std::string sizes_both_ways(RankContext& ctx) {
  const size_t sizes[] = {0, 1, kEagerMax, kEagerMax + 1, kBig};
  const TransportCounters before = ctx.counters();
  std::vector<PendingOp> recvs, sends;
  std::vector<char*> in;
  size_t total = 0;
  for (size_t i = 0; i < std::size(sizes); ++i) {
    in.push_back(ctx.buffer(sizes[i]));
    recvs.push_back(ctx.recv(Tag{1, i, static_cast<uint64_t>(ctx.peer)}, in[i], sizes[i]));
  }
  for (size_t i = 0; i < std::size(sizes); ++i) {
    char* out = ctx.buffer(sizes[i]);
    fill_pattern(out, sizes[i], seed_of(ctx.rank, 1, i));
    sends.push_back(ctx.send(Tag{1, i, static_cast<uint64_t>(ctx.rank)}, out, sizes[i]));
    total += sizes[i];
  }
  for (size_t i = 0; i < std::size(sizes); ++i) {
    OpResult s = sends[i].wait();
    SCENARIO_CHECK(ctx, s.status.ok() && s.bytes == sizes[i], "send " + std::to_string(sizes[i]) + ": " + describe(s));
    OpResult r = recvs[i].wait();
    SCENARIO_CHECK(ctx, r.status.ok() && r.bytes == sizes[i], "recv " + std::to_string(sizes[i]) + ": " + describe(r));
    const std::string data = check_pattern(in[i], sizes[i], seed_of(ctx.peer, 1, i));
    SCENARIO_CHECK(ctx, data.empty(), "size " + std::to_string(sizes[i]) + ": " + data);
  }
  const TransportCounters after = ctx.counters();
  SCENARIO_CHECK(ctx, after.bytes_sent - before.bytes_sent == total,
                 std::to_string(after.bytes_sent - before.bytes_sent));
  SCENARIO_CHECK(ctx, after.bytes_received - before.bytes_received == total,
                 std::to_string(after.bytes_received - before.bytes_received));
  return "";
}

namespace {

// rendezvous_to_sink: messages longer than the eager limit reach the sink; else all go to buf.
std::string receive_through_sink(RankContext& ctx, bool rendezvous_to_sink) {
  const size_t sizes[] = {100, kEagerMax, kEagerMax + 1, MessageChannel::kPieceBytes * 3, (3u << 20) + 12};
  constexpr char kUntouched = 0x5A;
  struct Received {
    std::vector<char> assembled;
    size_t next = 0;  // offset the next piece must start at
    size_t pieces = 0;
    std::string error;
  };
  std::vector<std::shared_ptr<Received>> got;
  std::vector<PendingOp> recvs, sends;
  std::vector<char*> in;
  for (size_t i = 0; i < std::size(sizes); ++i) {
    auto r = std::make_shared<Received>();
    r->assembled.assign(sizes[i], 0);
    got.push_back(r);
    in.push_back(ctx.buffer(sizes[i], kUntouched));
    recvs.push_back(ctx.recv_pieces(
        Tag{8, i, static_cast<uint64_t>(ctx.peer)}, in[i], sizes[i], [r](const void* data, size_t offset, size_t len) {
          if (offset != r->next || len == 0 || len > MessageChannel::kPieceBytes ||
              offset + len > r->assembled.size()) {
            r->error += "piece at " + std::to_string(offset) + " of " + std::to_string(len) + " bytes after " +
                        std::to_string(r->next) + "; ";
            return;
          }
          std::memcpy(r->assembled.data() + offset, data, len);
          r->next += len;
          ++r->pieces;
        }));
  }
  for (size_t i = 0; i < std::size(sizes); ++i) {
    char* out = ctx.buffer(sizes[i]);
    fill_pattern(out, sizes[i], seed_of(ctx.rank, 8, i));
    sends.push_back(ctx.send(Tag{8, i, static_cast<uint64_t>(ctx.rank)}, out, sizes[i]));
  }
  for (size_t i = 0; i < std::size(sizes); ++i) {
    const std::string what = "size " + std::to_string(sizes[i]) + ": ";
    SCENARIO_CHECK(ctx, sends[i].wait().status.ok(), what + "send failed");
    OpResult r = recvs[i].wait();
    SCENARIO_CHECK(ctx, r.status.ok() && r.bytes == sizes[i], what + describe(r));
    const Received& g = *got[i];
    SCENARIO_CHECK(ctx, g.error.empty(), what + g.error);
    if (sizes[i] <= kEagerMax || !rendezvous_to_sink) {
      SCENARIO_CHECK(ctx, g.pieces == 0, what + "a message that belongs in the buffer went to the sink");
      const std::string data = check_pattern(in[i], sizes[i], seed_of(ctx.peer, 8, i));
      SCENARIO_CHECK(ctx, data.empty(), what + data);
      continue;
    }
    SCENARIO_CHECK(ctx, g.next == sizes[i], what + "the sink got " + std::to_string(g.next) + " bytes");
    const std::string data = check_pattern(g.assembled.data(), sizes[i], seed_of(ctx.peer, 8, i));
    SCENARIO_CHECK(ctx, data.empty(), what + data);
    SCENARIO_CHECK(ctx, std::all_of(in[i], in[i] + sizes[i], [](char c) { return c == kUntouched; }),
                   what + "the buffer was written although the sink took the message");
  }
  return "";
}

}  // namespace

std::string pieces_in_order(RankContext& ctx) { return receive_through_sink(ctx, true); }
std::string pieces_by_default(RankContext& ctx) { return receive_through_sink(ctx, false); }

std::string reverse_tags(RankContext& ctx) {
  constexpr size_t kCount = 32;
  auto size_of = [](size_t i) { return (i * 37011) % 300000; };  // eager and rendezvous mixed
  std::vector<PendingOp> recvs(kCount), sends;
  std::vector<char*> in(kCount);
  for (size_t k = 0; k < kCount; ++k) {
    const size_t i = kCount - 1 - k;
    in[i] = ctx.buffer(size_of(i));
    recvs[i] = ctx.recv(Tag{2, i, static_cast<uint64_t>(ctx.peer)}, in[i], size_of(i));
  }
  for (size_t i = 0; i < kCount; ++i) {
    char* out = ctx.buffer(size_of(i));
    fill_pattern(out, size_of(i), seed_of(ctx.rank, 2, i));
    sends.push_back(ctx.send(Tag{2, i, static_cast<uint64_t>(ctx.rank)}, out, size_of(i)));
  }
  for (size_t i = 0; i < kCount; ++i) {
    OpResult s = sends[i].wait();
    SCENARIO_CHECK(ctx, s.status.ok(), describe(s));
    OpResult r = recvs[i].wait();
    SCENARIO_CHECK(ctx, r.status.ok() && r.bytes == size_of(i), describe(r));
    const std::string data = check_pattern(in[i], size_of(i), seed_of(ctx.peer, 2, i));
    SCENARIO_CHECK(ctx, data.empty(), "tag " + std::to_string(i) + ": " + data);
  }
  return "";
}

std::string sent_then_closed(RankContext& ctx) {
  constexpr size_t kSize = 5000;
  const Tag tag{5, 1, 0};
  const Tag closed{5, 2, 0};
  if (ctx.rank == 0) {
    char* out = ctx.buffer(kSize);
    fill_pattern(out, kSize, seed_of(0, 5, 1));
    OpResult r = ctx.send(tag, out, kSize).wait();
    SCENARIO_CHECK(ctx, r.status.ok(), describe(r));
    PendingOp flushed;
    auto conn = ctx.conn;
    ctx.io->call([conn, done = flushed.completion()]() mutable {
      conn->flush([conn, done] {
        conn->close(Status::failure(dcRemoteError, "closed by the test"));
        done(Status::success(), 0);
      });
    });
    OpResult f = flushed.wait();
    SCENARIO_CHECK(ctx, f.status.ok(), describe(f));
    return "";
  }
  // Wait until the peer's close has arrived: a receive for a tag nobody sends fails then.
  char dummy = 0;
  OpResult c = ctx.recv(closed, &dummy, 1).wait();
  SCENARIO_CHECK(ctx, c.status.code == dcRemoteError, "expected the close to fail this receive: " + describe(c));
  char* in = ctx.buffer(kSize);
  OpResult r = ctx.recv(tag, in, kSize).wait();
  SCENARIO_CHECK(ctx, r.status.ok() && r.bytes == kSize, "message sent before the close: " + describe(r));
  SCENARIO_CHECK(ctx, check_pattern(in, kSize, seed_of(0, 5, 1)).empty(), "payload differs");
  return "";
}

std::string cancelled_receives(RankContext& ctx) {
  constexpr size_t kLarge = 32 << 20;  // rendezvous, long enough to be in flight when cancelled
  const Tag posted{6, 1, 0}, large{6, 1, 1}, other{6, 2, 0}, go{6, 3, 0};
  if (ctx.rank == 0) {
    char* big = ctx.buffer(kLarge, 'x');
    PendingOp big_send = ctx.send(large, big, kLarge);
    char go_byte = 0;
    OpResult g = ctx.recv(go, &go_byte, 1).wait();  // rank 1 cancelled by now
    SCENARIO_CHECK(ctx, g.status.ok(), describe(g));
    char small = 's';
    OpResult a = ctx.send(posted, &small, 1).wait();
    OpResult b = ctx.send(other, &small, 1).wait();
    // big_send is not waited for: if its receive was cancelled before the announcement arrived,
    // nobody takes it (in DeepComm the sender's operation fails with the communicator).
    SCENARIO_CHECK(ctx, a.status.ok() && b.status.ok(), describe(a) + " / " + describe(b));
    return "";
  }
  char* in_small = ctx.buffer(1, 'u');
  char* in_big = ctx.buffer(kLarge, 'u');
  char* in_other = ctx.buffer(1, 'u');
  PendingOp p = ctx.recv(posted, in_small, 1);
  PendingOp l = ctx.recv(large, in_big, kLarge);
  PendingOp o = ctx.recv(other, in_other, 1);
  auto conn = ctx.conn;
  ctx.io->call([conn] { conn->cancel(6, 1); });
  OpResult pr = p.wait(), lr = l.wait();
  SCENARIO_CHECK(ctx, pr.status.code == dcSystemError, "posted receive: " + describe(pr));
  // The large one either completed before the cancel reached it, or was cancelled. Part of its
  // payload may have landed before the cancel; nothing may land once it was reported.
  SCENARIO_CHECK(ctx, lr.status.ok() || lr.status.code == dcSystemError, "large receive: " + describe(lr));
  const std::vector<char> at_cancel(in_big, in_big + kLarge);
  char go_byte = 1;
  OpResult g = ctx.send(go, &go_byte, 1).wait();
  SCENARIO_CHECK(ctx, g.status.ok(), describe(g));
  OpResult or_ = o.wait();
  SCENARIO_CHECK(ctx, or_.status.ok() && in_other[0] == 's', "other operation: " + describe(or_));
  SCENARIO_CHECK(ctx, in_small[0] == 'u', "a cancelled receive's buffer was written");
  if (!lr.status.ok()) {
    // Give the dropped payload time to arrive: it must not land in the buffer.
    char probe = 0;
    ctx.recv(Tag{6, 9, 0}, &probe, 1).wait(300);
    SCENARIO_CHECK(ctx, std::memcmp(in_big, at_cancel.data(), kLarge) == 0,
                   "a cancelled rendezvous wrote its buffer after the cancel was reported");
  }
  return "";
}

std::string late_messages_of_cancelled(RankContext& ctx) {
  // 100 x 60000 B is more than the eager window: only credit returned for the dropped ones lets
  // the later ones go eagerly, and the 4 MiB one is an announcement that must be refused.
  constexpr size_t kCount = 100, kSize = 60000, kLarge = 4 << 20;
  const Tag go{7, 1, 0}, after{7, 2, 0};
  if (ctx.rank == 1) {
    auto conn = ctx.conn;
    ctx.io->call([conn] { conn->cancel(7, 5); });  // before anything of operation 5 arrived
    char go_byte = 1;
    OpResult g = ctx.send(go, &go_byte, 1).wait();
    SCENARIO_CHECK(ctx, g.status.ok(), describe(g));
    char* in = ctx.buffer(kSize);
    OpResult a = ctx.recv(after, in, kSize).wait();
    SCENARIO_CHECK(ctx, a.status.ok() && a.bytes == kSize, "the next operation: " + describe(a));
    SCENARIO_CHECK(ctx, check_pattern(in, kSize, seed_of(0, 7, 2)).empty(), "the next operation's data");
    return "";
  }
  char go_byte = 0;
  OpResult g = ctx.recv(go, &go_byte, 1).wait();  // rank 1 cancelled operation 5 by now
  SCENARIO_CHECK(ctx, g.status.ok(), describe(g));
  const TransportCounters before = ctx.counters();
  std::vector<PendingOp> sends;
  char* small = ctx.buffer(kSize, 's');
  for (size_t i = 0; i < kCount; ++i) sends.push_back(ctx.send(Tag{7, 5, i}, small, kSize));
  sends.push_back(ctx.send(Tag{7, 5, kCount}, ctx.buffer(kLarge, 'l'), kLarge));
  // Every send ends without error and without a receive: the peer dropped or refused it.
  for (auto& send : sends) {
    OpResult r = send.wait(5000);
    SCENARIO_CHECK(ctx, r.status.ok(), "a send of the cancelled operation: " + describe(r));
  }
  const TransportCounters mid = ctx.counters();
  SCENARIO_CHECK(ctx, mid.bytes_sent - before.bytes_sent <= kCount * kSize,
                 "the refused announcement counted as sent: " + std::to_string(mid.bytes_sent - before.bytes_sent));
  char* out = ctx.buffer(kSize);
  fill_pattern(out, kSize, seed_of(0, 7, 2));
  OpResult a = ctx.send(after, out, kSize).wait();
  SCENARIO_CHECK(ctx, a.status.ok(), "the next operation: " + describe(a));
  return "";
}

std::string unexpected_messages(RankContext& ctx) {
  // 800 x 6000 B is more than the eager window: the later ones must fall back to rendezvous. The
  // sizes go eagerly on every connection (UCX's in-place ones take only up to 8 KiB eagerly).
  constexpr size_t kCount = 800;
  constexpr size_t kSize = 6000;
  constexpr size_t kLarge = 1 << 20;
  auto size_of = [&](size_t i) { return i == 0 ? 4000 : i == kCount + 1 ? kLarge : kSize; };
  const Tag go{3, 1000, 0};
  if (ctx.rank == 0) {
    std::vector<PendingOp> sends;
    for (size_t i = 0; i <= kCount + 1; ++i) {
      char* out = ctx.buffer(size_of(i));
      fill_pattern(out, size_of(i), seed_of(0, 3, i));
      sends.push_back(ctx.send(Tag{3, i, 0}, out, size_of(i)));
      // The first message must complete while rank 1 has posted nothing but the "go" receive.
      if (i == 0) {
        OpResult first = sends[0].wait();
        SCENARIO_CHECK(ctx, first.status.ok(), "eager send without a posted receive: " + describe(first));
      }
    }
    char go_byte = 7;
    OpResult g = ctx.send(go, &go_byte, 1).wait();
    SCENARIO_CHECK(ctx, g.status.ok(), describe(g));
    for (auto& s : sends) {
      OpResult r = s.wait();
      SCENARIO_CHECK(ctx, r.status.ok(), describe(r));
    }
    return "";
  }
  char go_byte = 0;
  OpResult g = ctx.recv(go, &go_byte, 1).wait();
  SCENARIO_CHECK(ctx, g.status.ok() && go_byte == 7, describe(g));
  std::vector<PendingOp> recvs(kCount + 2);
  std::vector<char*> in(kCount + 2);
  for (size_t k = 0; k <= kCount + 1; ++k) {
    const size_t i = (k * 7) % (kCount + 2);  // a scrambled order (7 is coprime with 802)
    in[i] = ctx.buffer(size_of(i));
    recvs[i] = ctx.recv(Tag{3, i, 0}, in[i], size_of(i));
  }
  for (size_t i = 0; i <= kCount + 1; ++i) {
    OpResult r = recvs[i].wait();
    SCENARIO_CHECK(ctx, r.status.ok() && r.bytes == size_of(i), describe(r));
    const std::string data = check_pattern(in[i], size_of(i), seed_of(0, 3, i));
    SCENARIO_CHECK(ctx, data.empty(), "message " + std::to_string(i) + ": " + data);
  }
  return "";
}

std::string short_and_too_long(RankContext& ctx) {
  struct Case {
    size_t len, capacity;
    bool fits;
  };
  const Case cases[] = {
      {1000, 4096, true},       // eager, shorter than the buffer
      {100000, 200000, true},   // rendezvous, shorter than the buffer
      {1000, 10, false},        // eager, too long
      {300000, 100000, false},  // rendezvous, too long
      {5000, 5000, true},       // the connection still works afterwards
  };
  constexpr size_t kCanary = 64;
  if (ctx.rank == 0) {
    for (size_t i = 0; i < std::size(cases); ++i) {
      char* out = ctx.buffer(cases[i].len);
      fill_pattern(out, cases[i].len, seed_of(0, 4, i));
      OpResult s = ctx.send(Tag{4, i, 0}, out, cases[i].len).wait();
      // A rendezvous send learns that the receiver refused it; an eager one was already delivered.
      const bool refused = !cases[i].fits && cases[i].len > kEagerMax;
      SCENARIO_CHECK(ctx, refused ? s.status.code == dcInvalidUsage : s.status.ok(), describe(s));
    }
    return "";
  }
  for (size_t i = 0; i < std::size(cases); ++i) {
    char* in = ctx.buffer(cases[i].capacity + kCanary, 0x5A);
    OpResult r = ctx.recv(Tag{4, i, 0}, in, cases[i].capacity).wait();
    if (cases[i].fits) {
      SCENARIO_CHECK(ctx, r.status.ok() && r.bytes == cases[i].len, describe(r));
      const std::string data = check_pattern(in, cases[i].len, seed_of(0, 4, i));
      SCENARIO_CHECK(ctx, data.empty(), data);
    } else {
      SCENARIO_CHECK(ctx, r.status.code == dcInvalidUsage, describe(r));
    }
    const char* canary = in + cases[i].capacity;
    SCENARIO_CHECK(ctx, std::all_of(canary, canary + kCanary, [](char c) { return c == 0x5A; }),
                   "written past the capacity");
  }
  return "";
}

std::string peer_killed(RankContext& ctx) {
  const Tag ready{5, 3, 1};
  if (ctx.rank == 1) {
    char* big = ctx.buffer(kBig);
    fill_pattern(big, kBig, seed_of(1, 5, 0));
    PendingOp in_flight = ctx.send(Tag{5, 0, 1}, big, kBig);       // rank 0 receives it
    PendingOp unmatched = ctx.send(Tag{5, 1, 1}, big, kBig);       // rank 0 never receives it
    PendingOp never = ctx.recv(Tag{5, 2, 0}, ctx.buffer(16), 16);  // rank 0 never sends it
    char one = 1;
    ctx.send(ready, &one, 1);
    never.wait(30000);  // killed long before
    return "rank 1 was not killed";
  }
  char* in = ctx.buffer(kBig);
  char* out = ctx.buffer(kBig);
  PendingOp in_flight = ctx.recv(Tag{5, 0, 1}, in, kBig);
  PendingOp unmatched_send = ctx.send(Tag{5, 9, 0}, out, kBig);           // rank 1 never receives it
  PendingOp unmatched_recv = ctx.recv(Tag{5, 7, 1}, ctx.buffer(16), 16);  // rank 1 never sends it
  char one = 0;
  OpResult r = ctx.recv(ready, &one, 1).wait();
  SCENARIO_CHECK(ctx, r.status.ok(), describe(r));
  const auto killed_at = std::chrono::steady_clock::now();
  SCENARIO_CHECK(ctx, kill(ctx.peer_pid, SIGKILL) == 0, "kill failed");
  OpResult s = unmatched_send.wait(5000);
  OpResult u = unmatched_recv.wait(5000);
  OpResult f = in_flight.wait(5000);
  const auto elapsed = std::chrono::steady_clock::now() - killed_at;
  SCENARIO_CHECK(ctx, s.status.code == dcRemoteError, describe(s));
  SCENARIO_CHECK(ctx, u.status.code == dcRemoteError, describe(u));
  // The 64 MiB transfer either finished before the kill or failed with it.
  SCENARIO_CHECK(ctx,
                 f.status.code == dcRemoteError || (f.status.ok() && check_pattern(in, kBig, seed_of(1, 5, 0)).empty()),
                 describe(f));
  SCENARIO_CHECK(ctx, elapsed < std::chrono::seconds(1),
                 std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()) + " ms");
  // Later operations fail at once.
  OpResult later = ctx.send(Tag{5, 10, 0}, out, 1).wait(1000);
  SCENARIO_CHECK(ctx, later.status.code == dcRemoteError, describe(later));
  return "";
}

namespace {

using Connected = std::pair<Status, std::shared_ptr<Connection>>;

std::shared_future<Connected> start_connect(RankIo& io, Transport& t, int peer, const std::string& address,
                                            int timeout_ms) {
  auto promise = std::make_shared<std::promise<Connected>>();
  std::shared_future<Connected> future = promise->get_future().share();
  io.call([&] {
    t.connect(peer, address, timeout_ms, [promise](const Status& s, std::shared_ptr<Connection> c) {
      promise->set_value({s, std::move(c)});
    });
  });
  return future;
}

std::string expect_failure(const std::shared_future<Connected>& f, const char* what, int timeout_ms,
                           std::chrono::steady_clock::time_point started) {
  if (f.wait_for(std::chrono::milliseconds(timeout_ms + 5000)) != std::future_status::ready) {
    return std::string(what) + ": connect() never completed";
  }
  const auto elapsed = std::chrono::steady_clock::now() - started;
  if (f.get().first.ok()) return std::string(what) + ": connect() succeeded";
  if (elapsed > std::chrono::milliseconds(timeout_ms + 2000))
    return std::string(what) + ": failed only long after the deadline";
  return "";
}

}  // namespace

std::string connect_deadlines(const TransportFactory& factory, const std::string& dead_address) {
  constexpr int kTimeoutMs = 300;
  RankIo io;
  std::unique_ptr<Transport> dialer, acceptor;
  std::string result;
  io.call([&] {
    const uint64_t session = random_session();
    dialer = factory(options_for(io.io(), 0, session));
    acceptor = factory(options_for(io.io(), 1, session));
  });
  const auto started = std::chrono::steady_clock::now();
  auto dialed = start_connect(io, *dialer, 1, dead_address, kTimeoutMs);
  auto accepted = start_connect(io, *acceptor, 0, dialer->address(), kTimeoutMs);  // nobody dials rank 1
  result = expect_failure(dialed, "dialing", kTimeoutMs, started);
  if (result.empty()) result = expect_failure(accepted, "accepting", kTimeoutMs, started);
  if (result.empty() && std::chrono::steady_clock::now() - started < std::chrono::milliseconds(kTimeoutMs - 50)) {
    result = "connect() failed before its deadline";
  }
  io.call([&] {
    dialer.reset();
    acceptor.reset();
  });
  return result;
}

std::string wrong_session(const TransportFactory& factory) {
  constexpr int kTimeoutMs = 500;
  RankIo io;
  std::unique_ptr<Transport> dialer, acceptor;
  io.call([&] {
    dialer = factory(options_for(io.io(), 0, 1111));
    acceptor = factory(options_for(io.io(), 1, 2222));
  });
  const auto started = std::chrono::steady_clock::now();
  auto accepted = start_connect(io, *acceptor, 0, "", kTimeoutMs);
  auto dialed = start_connect(io, *dialer, 1, acceptor->address(), kTimeoutMs);
  std::string result = expect_failure(dialed, "dialing into another session", kTimeoutMs, started);
  if (result.empty()) result = expect_failure(accepted, "accepting from another session", kTimeoutMs, started);
  io.call([&] {
    dialer.reset();
    acceptor.reset();
  });
  return result;
}

}  // namespace dc::test
