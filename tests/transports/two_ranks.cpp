#include "tests/transports/two_ranks.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <stdexcept>

namespace dc::test {

namespace {

constexpr int kConnectTimeoutMs = 10000;
constexpr auto kCallDeadline = std::chrono::seconds(10);
constexpr int kChildDeadlineMs = 60000;

uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

void write_all(int fd, const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len) {
    const ssize_t n = write(fd, p, len);
    if (n <= 0) throw std::runtime_error("pipe write failed");
    p += n;
    len -= static_cast<size_t>(n);
  }
}

void read_all(int fd, void* data, size_t len, int timeout_ms) {
  char* p = static_cast<char*>(data);
  while (len) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, timeout_ms) != 1) throw std::runtime_error("pipe read timed out");
    const ssize_t n = read(fd, p, len);
    if (n <= 0) throw std::runtime_error("pipe closed");
    p += n;
    len -= static_cast<size_t>(n);
  }
}

void write_message(int fd, const std::string& s) {
  const uint32_t len = static_cast<uint32_t>(s.size());
  write_all(fd, &len, sizeof len);
  write_all(fd, s.data(), s.size());
}

std::string read_message(int fd) {
  uint32_t len = 0;
  read_all(fd, &len, sizeof len, kConnectTimeoutMs);
  std::string s(len, '\0');
  read_all(fd, s.data(), len, kConnectTimeoutMs);
  return s;
}

// The pattern's bytes [base, base + n) (base a multiple of 8).
void pattern_at(char* p, size_t n, uint64_t seed, size_t base) {
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = splitmix(seed * 0x100000001B3ull + base + i);
    std::memcpy(p + i, &v, std::min<size_t>(8, n - i));
  }
}

using Exchange = std::function<std::string(const std::string& own_address)>;

// Both ranks' traffic is over once both passed this, so closing cannot cut the peer's last messages.
std::string barrier(RankContext& ctx) {
  char in = 0;
  const char out = 1;
  PendingOp r = ctx.recv(Tag{~0ull, ~0ull, 0}, &in, 1);
  PendingOp s = ctx.send(Tag{~0ull, ~0ull, 0}, &out, 1);
  OpResult rr = r.wait();
  OpResult sr = s.wait();
  SCENARIO_CHECK(ctx, rr.status.ok() && sr.status.ok() && in == 1,
                 "final barrier: " + describe(rr) + " / " + describe(sr));
  return "";
}

std::string run_rank(int rank, pid_t peer_pid, uint64_t session, const TransportFactory& factory,
                     const Scenario& scenario, const Exchange& exchange, bool with_barrier) {
  RankContext ctx;
  ctx.rank = rank;
  ctx.peer = 1 - rank;
  ctx.peer_pid = peer_pid;
  ctx.session = session;
  RankIo io;  // destroyed before ctx: no handler outlives the buffers
  ctx.io = &io;
  std::unique_ptr<Transport> transport;
  std::string result;
  try {
    io.call([&] { transport = factory(options_for(io.io(), rank, session)); });
    ctx.transport = transport.get();
    const std::string peer_address = exchange(transport->address());
    using Connected = std::pair<Status, std::shared_ptr<Connection>>;
    auto connected = std::make_shared<std::promise<Connected>>();
    auto future = connected->get_future();
    io.call([&] {
      transport->connect(ctx.peer, peer_address, kConnectTimeoutMs,
                         [connected](const Status& s, std::shared_ptr<Connection> c) {
                           connected->set_value({s, std::move(c)});
                         });
    });
    if (future.wait_for(std::chrono::milliseconds(kConnectTimeoutMs + 5000)) != std::future_status::ready) {
      result = "rank " + std::to_string(rank) + ": connect never completed";
    } else if (auto [status, conn] = future.get(); !status.ok()) {
      result = "rank " + std::to_string(rank) + ": connect failed: " + status.message;
    } else {
      ctx.conn = conn;
      result = scenario(ctx);
      if (result.empty() && with_barrier) result = barrier(ctx);
    }
  } catch (const std::exception& e) {
    result = "rank " + std::to_string(rank) + ": exception: " + e.what();
  }
  try {
    io.call([&] {
      ctx.conn.reset();
      transport.reset();
    });
  } catch (const std::exception& e) {
    if (result.empty()) result = std::string("teardown: ") + e.what();
  }
  return result;
}

std::string run_threads(const TransportFactory& factory, const Scenario& scenario, uint64_t session,
                        bool with_barrier) {
  std::promise<std::string> address[2];
  std::shared_future<std::string> published[2] = {address[0].get_future().share(), address[1].get_future().share()};
  auto exchange_for = [&](int rank) {
    return [&, rank](const std::string& own) {
      address[rank].set_value(own);
      if (published[1 - rank].wait_for(std::chrono::milliseconds(kConnectTimeoutMs)) != std::future_status::ready) {
        throw std::runtime_error("address exchange timed out");
      }
      return published[1 - rank].get();
    };
  };
  std::string result1;
  std::thread rank1([&] { result1 = run_rank(1, 0, session, factory, scenario, exchange_for(1), with_barrier); });
  std::string result0 = run_rank(0, 0, session, factory, scenario, exchange_for(0), with_barrier);
  rank1.join();
  return result0 + (result0.empty() || result1.empty() ? "" : "\n") + result1;
}

// Waits for the child with a deadline (pidfd: no polling loop); kills it when the deadline passes.
int wait_child(pid_t child) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  if (pidfd >= 0) {
    pollfd pfd{pidfd, POLLIN, 0};
    if (poll(&pfd, 1, kChildDeadlineMs) != 1) kill(child, SIGKILL);
    close(pidfd);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

std::string run_processes(const TransportFactory& factory, const Scenario& scenario, uint64_t session,
                          RunOptions options) {
  int to_child[2], to_parent[2];
  if (pipe(to_child) != 0 || pipe(to_parent) != 0) return "pipe failed";
  const pid_t child = fork();
  if (child < 0) return "fork failed";
  if (child == 0) {
    close(to_child[1]);
    close(to_parent[0]);
    Exchange exchange = [&](const std::string& own) {
      write_message(to_parent[1], own);
      return read_message(to_child[0]);
    };
    const std::string r = run_rank(1, getppid(), session, factory, scenario, exchange,
                                   !options.child_gets_killed && !options.closes_connection);
    if (!r.empty()) std::fprintf(stderr, "child: %s\n", r.c_str());
    _exit(r.empty() ? 0 : 1);
  }
  close(to_child[0]);
  close(to_parent[1]);
  Exchange exchange = [&](const std::string& own) {
    write_message(to_child[1], own);
    return read_message(to_parent[0]);
  };
  std::string result = run_rank(0, child, session, factory, scenario, exchange,
                                !options.child_gets_killed && !options.closes_connection);
  close(to_child[1]);
  close(to_parent[0]);
  const int status = wait_child(child);
  const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (options.child_gets_killed ? !killed : !clean) {
    result += "\nrank 1 (child process) ended with status " + std::to_string(status) + " (see its stderr)";
  }
  return result;
}

}  // namespace

RankIo::RankIo() : work_(boost::asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}

RankIo::~RankIo() {
  work_.reset();
  io_.stop();
  thread_.join();
}

void RankIo::call(std::function<void()> fn) {
  auto done = std::make_shared<std::promise<void>>();
  auto future = done->get_future();
  boost::asio::post(io_, [fn = std::move(fn), done] {
    try {
      fn();
      done->set_value();
    } catch (...) {
      done->set_exception(std::current_exception());
    }
  });
  if (future.wait_for(kCallDeadline) != std::future_status::ready) {
    throw std::runtime_error("io thread did not run a call within 10 s");
  }
  future.get();
}

PendingOp::PendingOp()
    : promise_(std::make_shared<std::promise<OpResult>>()), future_(promise_->get_future().share()) {}

Completion PendingOp::completion() {
  auto promise = promise_;
  return [promise](const Status& s, size_t bytes) { promise->set_value(OpResult{s, bytes}); };
}

OpResult PendingOp::wait(int timeout_ms) {
  if (future_.wait_for(std::chrono::milliseconds(timeout_ms)) != std::future_status::ready) {
    return OpResult{Status::failure(dcInProgress, "not completed within " + std::to_string(timeout_ms) + " ms"), 0};
  }
  return future_.get();
}

char* RankContext::buffer(size_t bytes, char fill) {
  buffers_.emplace_back(bytes, fill);
  return buffers_.back().data();
}

PendingOp RankContext::send(const Tag& tag, const void* buf, size_t len) {
  PendingOp op;
  auto c = conn;
  boost::asio::post(io->io(), [c, tag, buf, len, done = op.completion()] { c->send(tag, buf, len, done); });
  return op;
}

PendingOp RankContext::recv(const Tag& tag, void* buf, size_t capacity) {
  PendingOp op;
  auto c = conn;
  boost::asio::post(io->io(), [c, tag, buf, capacity, done = op.completion()] { c->recv(tag, buf, capacity, done); });
  return op;
}

PendingOp RankContext::recv_pieces(const Tag& tag, void* buf, size_t capacity, PieceSink sink) {
  PendingOp op;
  auto c = conn;
  boost::asio::post(io->io(), [c, tag, buf, capacity, sink = std::move(sink), done = op.completion()] {
    c->recv_pieces(tag, buf, capacity, sink, done);
  });
  return op;
}

TransportCounters RankContext::counters() {
  TransportCounters result;
  io->call([&] { result = conn->counters(); });
  return result;
}

const char* mode_name(RankMode mode) { return mode == RankMode::Threads ? "Threads" : "Processes"; }

std::string run_two_ranks(RankMode mode, const TransportFactory& factory, const Scenario& scenario,
                          RunOptions options) {
  const uint64_t session = random_session();
  if (mode == RankMode::Threads) return run_threads(factory, scenario, session, !options.closes_connection);
  return run_processes(factory, scenario, session, options);
}

uint64_t random_session() {
  std::random_device random;
  return (uint64_t{random()} << 32) | random();
}

TransportOptions options_for(boost::asio::io_context& io, int rank, uint64_t session) {
  TransportOptions o{&io, rank, session, "test-host"};
  for (size_t i = 0; i < o.secret.bytes.size(); ++i)
    o.secret.bytes[i] = static_cast<uint8_t>(session >> (i % 8 * 8)) ^ uint8_t(i);
  return o;
}

void fill_pattern(char* p, size_t n, uint64_t seed) { pattern_at(p, n, seed, 0); }

std::string check_pattern(const char* p, size_t n, uint64_t seed) {
  std::vector<char> expected(std::min<size_t>(n, 1 << 20));
  for (size_t off = 0; off < n; off += expected.size()) {
    const size_t len = std::min(expected.size(), n - off);
    pattern_at(expected.data(), len, seed, off);
    if (std::memcmp(expected.data(), p + off, len) == 0) continue;
    for (size_t j = 0; j < len; ++j) {
      if (expected[j] != p[off + j]) return "data differs at byte " + std::to_string(off + j);
    }
  }
  return "";
}

std::string describe(const OpResult& r) {
  return "{code " + std::to_string(r.status.code) + ", bytes " + std::to_string(r.bytes) +
         (r.status.message.empty() ? "" : ", " + r.status.message) + "}";
}

}  // namespace dc::test
