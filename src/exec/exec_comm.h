// The executor's state of one communicator: who the ranks are, the connections to them, the queue
// of its collectives, its failure state, scratch memory and flat board. The communicator (src/core)
// owns one and hands it to the executor; nothing in src/exec knows the communicator itself.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "src/exec/scratch_memory.h"
#include "transports/transport.h"

namespace dc {

class Operation;
class FlatBoard;
class ResidualStore;
struct ControlChannel;
class RmaChannel;

// Transports of one rank and its connections to every peer (index = rank in the communicator that
// created them), shared by a communicator and the ones split or shrunk from it (their messages
// differ by communicator id in the tag). Destroyed on the engine thread.
struct PeerLinks {
  std::vector<std::unique_ptr<Transport>> transports;
  std::vector<std::shared_ptr<Connection>> peers;  // [own rank]: the self connection
  ~PeerLinks();
};

struct ExecComm {
  uint64_t id = 0;  // tag namespace, same on all ranks
  int rank = 0;
  int nranks = 1;
  std::shared_ptr<PeerLinks> links;
  std::vector<int> link_index;    // comm rank -> index into links->peers
  int timeout_ms = 300000;        // progress deadline (DEEPCOMM_TIMEOUT)
  int engine_timeout_ms = 60000;  // deadline of a hand-off to the engine thread

  // Numbering, advanced by the thread issuing operations. Atomic: the engine reads it for the
  // failure notices while a caller may be issuing (abort or a peer's failure meanwhile).
  std::atomic<uint64_t> next_collective_seq{0};
  std::vector<std::atomic<uint32_t>> next_send_seq, next_recv_seq;  // per peer
  // Zeroes the per-peer numbering for nranks peers (at set-up).
  void reset_p2p_sequences() {
    next_send_seq = std::vector<std::atomic<uint32_t>>(nranks);
    next_recv_seq = std::vector<std::atomic<uint32_t>>(nranks);
  }

  // Engine side.
  std::deque<std::shared_ptr<Operation>> collective_queue;  // front is running
  std::set<std::shared_ptr<Operation>> active_ops;          // queued or running
  bool failed = false;       // set once by fail_comm; every later operation fails at once
  uint64_t failed_from = 0;  // ... except collectives numbered below this (see fail_comm)
  Status failure;
  std::shared_ptr<ControlChannel> control;
  std::shared_ptr<RmaChannel> rma;        // one-sided traffic, from the first window or one-sided call
  ScratchMemory scratch[3];               // 0: the plan's scratch; 1: pre-multiplied input; 2: compressed messages
  std::atomic<uint64_t> scratch_held{0};  // their bytes, readable from any thread
  // Error feedback of compressed all-reduces on the NCCL path (made on first use).
  std::unique_ptr<ResidualStore> residual_store;

  // Operations submitted and not yet finished (destroy waits for them).
  std::mutex inflight_mutex;
  std::condition_variable inflight_cv;
  int inflight = 0;

  // Small collectives among ranks on one host (flat_collective.h): the board, when every rank
  // mapped it, and the caller's count of board rounds used. The engine records there the earliest
  // point a peer left at (its collective count), for flat operations that would wait for it.
  std::unique_ptr<FlatBoard> board;
  uint64_t next_flat_round = 0;
  std::atomic<uint64_t> flat_departure{UINT64_MAX};
  std::atomic<int> flat_departed_rank{-1};

  // The first error, readable from any thread.
  std::atomic<int> async_error{dcSuccess};
  std::mutex error_mutex;
  std::string error_message;

  ExecComm();  // out of line, where FlatBoard is complete
  ~ExecComm();
  Connection* peer(int r) const { return links->peers[link_index[r]].get(); }
  // Calls fn(Connection&) for each of the communicator's connections (none before set-up).
  template <class Fn>
  void for_each_connection(Fn fn) const {
    if (!links) return;
    for (int index : link_index)
      if (const auto& connection = links->peers[index]) fn(*connection);
  }
  void set_error(dcResult_t code, const std::string& message);
  Status error();
  // Waits until no operation is in flight; false when some still are after timeout_ms.
  bool wait_idle(int timeout_ms);

  // Memory accounting (dcCommMemory): what this communicator holds, from any thread.
  // What suspending releases, being made again on demand: the scratch buffers and the staging
  // memory of its connections (shared with the communicators split or shrunk from it).
  uint64_t releasable_bytes() const;
  // What stays: error-feedback residuals (state) and the flat board (which the peers write into).
  uint64_t persistent_bytes() const;
  // Frees the scratch buffers. Only while no operation is in flight (the engine writes them then).
  void release_scratch();
  // Gives back the connections' staging memory no transfer uses now (Connection::
  // release_idle_memory); returns the bytes. Engine thread only.
  size_t release_idle_connections();
};

}  // namespace dc
