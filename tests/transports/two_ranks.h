// Test harness for the transports: two ranks, either as two threads of this process or as this
// process (rank 0) and a forked child (rank 1). Each rank has its own io_context on its own thread,
// its own Transport and one Connection to the other; a scenario runs on each rank's test thread and
// returns "" or what went wrong (the child reports through its exit status and stderr).
#pragma once

#include <sys/types.h>

#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "transports/transport.h"

namespace dc::test {

// An io_context driven by its own thread (a stand-in for the progress engine).
class RankIo {
 public:
  RankIo();
  ~RankIo();
  boost::asio::io_context& io() { return io_; }
  // Runs fn on the io thread and waits for it (throws on a 10 s deadline or rethrows fn's error).
  void call(std::function<void()> fn);

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

struct OpResult {
  Status status;
  size_t bytes = 0;
};

// A posted send or receive.
class PendingOp {
 public:
  PendingOp();
  Completion completion();
  // Waits up to timeout_ms; a timeout reads as dcInProgress.
  OpResult wait(int timeout_ms = 20000);

 private:
  std::shared_ptr<std::promise<OpResult>> promise_;
  std::shared_future<OpResult> future_;
};

struct RankContext {
  int rank = 0;
  int peer = 1;
  pid_t peer_pid = 0;  // the peer process (0 when the ranks are threads)
  uint64_t session = 0;
  RankIo* io = nullptr;
  Transport* transport = nullptr;
  std::shared_ptr<Connection> conn;

  // Buffers live until the connection is gone (pending operations may still point into them).
  char* buffer(size_t bytes, char fill = 0);
  PendingOp send(const Tag& tag, const void* buf, size_t len);
  PendingOp recv(const Tag& tag, void* buf, size_t capacity);
  // The sink runs on the io thread, before the receive completes.
  PendingOp recv_pieces(const Tag& tag, void* buf, size_t capacity, PieceSink sink);
  TransportCounters counters();

 private:
  std::deque<std::vector<char>> buffers_;
};

using TransportFactory = std::function<std::unique_ptr<Transport>(const TransportOptions&)>;
using Scenario = std::function<std::string(RankContext&)>;

enum class RankMode { Threads, Processes };
const char* mode_name(RankMode mode);

struct RunOptions {
  bool child_gets_killed = false;  // the scenario SIGKILLs rank 1 (processes only)
  bool closes_connection = false;  // the scenario closes the connection: no final barrier
};

// Runs `scenario` on both ranks; returns "" or the failures of both.
std::string run_two_ranks(RankMode mode, const TransportFactory& factory, const Scenario& scenario,
                          RunOptions options = {});

uint64_t random_session();
// What a test rank's transport is made with: both ranks of a session share its secret.
TransportOptions options_for(boost::asio::io_context& io, int rank, uint64_t session);
void fill_pattern(char* p, size_t n, uint64_t seed);
// "" when p holds fill_pattern(seed), else where it differs.
std::string check_pattern(const char* p, size_t n, uint64_t seed);
std::string describe(const OpResult& r);

}  // namespace dc::test

#define SCENARIO_CHECK(ctx, cond, extra)                                                                              \
  do {                                                                                                                \
    if (!(cond)) {                                                                                                    \
      return std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": rank " + std::to_string((ctx).rank) + ": " + \
             #cond + " " + (extra);                                                                                   \
    }                                                                                                                 \
  } while (0)
