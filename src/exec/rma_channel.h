// One-sided traffic of a communicator (dcPutSignal, dcSignal, dcWaitSignal; NCCL's ncclPutSignal,
// ncclSignal, ncclWaitSignal) over the transport contract's tagged messages. A put travels to its
// target as a header (window, offset, length, signal, context) and then its payload, both tagged in
// the communicator's one-sided sequence, apart from collectives, point-to-point and the control
// channel. The target keeps a header receive posted from every peer; on a header it checks the
// window and range and posts the payload's receive straight into the window at that offset, so the
// transport lands it in place (cross-memory attach or a mapped region on shm, the socket on TCP,
// UCX's rendezvous), and then counts the signal. A peer's puts are taken one after another, in the
// order it issued them, so a signal is counted only after every put before it landed.
//
// Engine thread, except the signal board (any thread) and what says otherwise.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "base/error.h"
#include "src/exec/exec_comm.h"
#include "transports/transport.h"

namespace dc {

// Signals a rank can wait for on one context (sigIdx in [0, kSignalsPerContext)).
constexpr int kSignalsPerContext = 16;

struct SignalWait {
  int count = 0;  // signals to take
  int peer = 0;
  int signal = 0;
  int context = 0;
};

// Signals counted per (context, signal, peer) as puts land, and taken by waits. Any thread.
class SignalBoard {
 public:
  SignalBoard(int contexts, int nranks);
  void arrive(int context, int signal, int peer);
  // Waits until every wait's signals arrived beyond those taken before, then takes them all and
  // returns the success; the board's failure when it failed first. False (nothing taken) when the
  // deadline passed first.
  bool take(const std::vector<SignalWait>& waits, std::chrono::steady_clock::time_point deadline, Status* result);
  // Every waiter returns status from now on (the communicator failed).
  void fail(const Status& status);

 private:
  size_t slot(int context, int signal, int peer) const;

  const int nranks_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<uint64_t> arrived_, taken_;
  Status failure_;
};

struct RmaHeader {
  uint32_t window = 0;
  int32_t signal = 0;
  int32_t context = 0;
  uint32_t pad = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;  // 0: a signal without data
};

class RmaChannel : public std::enable_shared_from_this<RmaChannel> {
 public:
  // Posts the header receives from every peer. contexts: the communicator's number of contexts.
  static std::shared_ptr<RmaChannel> start(ExecComm* comm, int contexts);
  ~RmaChannel();

  // This rank's windows, as puts address them (the window's number on every rank).
  void add_window(uint32_t window, void* base, size_t bytes);
  // A put still landing in it from a peer fails the communicator (the ranks deregistered a window
  // that was in use); nothing is written into it afterwards.
  void remove_window(uint32_t window);

  // Sends a put (header.bytes from data, which stays valid until done) or a signal to peer; done
  // runs when data may be reused. A put to this rank itself is copied at once.
  void put(int peer, const RmaHeader& header, const void* data, std::function<void(const Status&)> done);

  SignalBoard& signals() { return *board_; }
  int contexts() const { return contexts_; }
  // The communicator failed (fail_comm): waiters return its error, and the puts still sending end,
  // so that none of them holds its buffer afterwards.
  void fail(const Status& status);
  // The communicator is being freed; receives still posted find no communicator.
  void stop() { comm_ = nullptr; }

 private:
  RmaChannel(ExecComm* comm, int contexts);
  void post_header_receive(int peer);
  void on_header(int peer);
  // Checks the header against this rank's windows; the failure the communicator gets otherwise.
  Status check(int peer, const RmaHeader& h) const;
  void landed(int peer, const RmaHeader& h);
  Tag tag(uint64_t step) const;

  ExecComm* comm_;
  const int contexts_;
  std::unique_ptr<SignalBoard> board_;
  struct Window {
    char* base;
    size_t bytes;
  };
  std::map<uint32_t, Window> windows_;
  std::vector<RmaHeader> inbox_;         // per peer: the header being received
  std::vector<uint64_t> next_from_;      // per peer: number of the next put it sends here
  std::vector<uint64_t> next_to_;        // per peer: number of the next put sent there
  std::vector<int64_t> landing_window_;  // per peer: the window a payload is landing in, or -1
};

}  // namespace dc
