// The communicator: one rank's view of a group of ranks. Connections to peers live in PeerLinks,
// shared by a communicator and the ones split from it (their messages differ by communicator id in
// the tag). Operations on one communicator are issued from one thread at a time (NCCL's rule);
// collectives run on the progress engine in issue order.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "src/core/config.h"
#include "src/plan/plan.h"
#include "transports/transport.h"

namespace dc {

class Operation;
class OpBatch;
class FlatBoard;
struct Registration;
struct ControlChannel;

// Transports of one rank and its connections to every peer (index = rank in the communicator that
// created them). Destroyed on the engine thread.
struct PeerLinks {
  std::vector<std::unique_ptr<Transport>> transports;
  std::vector<std::shared_ptr<Connection>> peers;  // [own rank]: the self connection
  ~PeerLinks();
};

// A user-created pre-multiplied-sum operator.
struct PreMulSumOp {
  dcDataType_t datatype = dcFloat32;
  uint8_t scalar[8] = {};
  bool in_use = false;
};

// A plan plus the reverse dependency lists the executor needs, cached per operation shape.
struct PreparedPlan {
  Plan plan;
  std::vector<uint32_t> dependents_begin;  // CSR: dependents of step i are
  std::vector<uint32_t> dependents;        // dependents[dependents_begin[i] .. begin[i+1])
};

}  // namespace dc

struct dcComm {
  uint64_t id = 0;  // tag namespace, same on all ranks
  int rank = 0;
  int nranks = 1;
  std::string name;
  dc::Config config;
  std::shared_ptr<dc::PeerLinks> links;
  std::vector<int> link_index;  // comm rank -> index into links->peers
  bool peers_share_memory = false;  // every peer is connected through shm (set by start_services)

  // Caller side (the one thread issuing operations).
  uint64_t next_collective_seq = 0;
  uint64_t next_split_seq = 0;
  uint64_t next_shrink_seq = 0;
  std::vector<uint32_t> next_send_seq, next_recv_seq;
  std::vector<dc::PreMulSumOp> premul_ops;
  std::map<std::string, std::shared_ptr<const dc::PreparedPlan>> plan_cache;

  // Engine side.
  std::deque<std::shared_ptr<dc::Operation>> collective_queue;  // front is running
  std::set<std::shared_ptr<dc::Operation>> active_ops;           // queued or running
  bool failed = false;  // set once by fail_comm; every later operation fails at once
  uint64_t failed_from = 0;  // ... except collectives numbered below this (see fail_comm)
  dc::Status failure;
  std::shared_ptr<dc::ControlChannel> control;
  struct ScratchBuffer {
    std::unique_ptr<std::byte[]> data;
    size_t size = 0;
  };
  ScratchBuffer scratch[2];  // 0: the plan's scratch; 1: pre-multiplied input

  // Operations submitted and not yet finished (destroy waits for them).
  std::mutex inflight_mutex;
  std::condition_variable inflight_cv;
  int inflight = 0;

  // Nonblocking communicators: set-up running on init_thread, and the batches of calls that
  // returned dcInProgress (dcCommGetAsyncError reports progress until they finished).
  std::atomic<bool> initializing{false};
  std::thread init_thread;
  std::mutex pending_mutex;
  std::vector<std::shared_ptr<dc::OpBatch>> pending;

  // Small collectives among ranks on one host (flat_collective.h): the board, when every rank
  // mapped it, and the caller's count of board rounds used. The engine records there the earliest
  // point a peer left at (its collective count), for flat operations that would wait for it.
  std::unique_ptr<dc::FlatBoard> board;
  uint64_t next_flat_round = 0;
  std::atomic<uint64_t> flat_departure{UINT64_MAX};
  std::atomic<int> flat_departed_rank{-1};

  // Memory registered with this communicator (registration.h).
  std::mutex registrations_mutex;
  std::vector<std::unique_ptr<dc::Registration>> registrations;

  // Readable from any thread (dcCommGetAsyncError, checks before issuing).
  std::atomic<int> async_error{dcSuccess};
  std::mutex error_mutex;
  std::string error_message;

  dcComm();  // out of line, where the members' types are complete
  ~dcComm();
  dc::Connection* peer(int r) const { return links->peers[link_index[r]].get(); }
  void set_error(dcResult_t code, const std::string& message);
  dc::Status error();
};

namespace dc {

// Registry of live communicators, so a destroyed or bogus handle is an error, not a crash.
void register_comm(dcComm* comm);
void unregister_comm(dcComm* comm);
// Throws dc::Error(dcInvalidArgument) for NULL or a handle that is not a live communicator.
dcComm* checked_comm(dcComm* comm);

// Creates a communicator of nranks from a unique id (blocking).
dcComm* init_rank(int nranks, const dcUniqueId& id, int rank, const dcConfig_t* config);
// The same with several rendezvous roots (ranks spread over them; see scalable_init.cpp).
dcComm* init_rank_scalable(int nranks, int rank, const std::vector<dcUniqueId>& ids, const dcConfig_t* config);
// Creates the child of comm for (color, key); returns nullptr for DC_SPLIT_NOCOLOR.
dcComm* split_comm(dcComm* comm, int color, int key, const dcConfig_t* config);
// The communicator of comm's ranks not in `excluded`, on comm's connections (no rendezvous).
dcComm* shrink_comm(dcComm* comm, std::vector<int> excluded, const dcConfig_t* config, int flags);
// Waits for this rank's outstanding operations, then frees the communicator.
void destroy_comm(dcComm* comm);
// Fails every pending operation at once (the other ranks are told), then frees the communicator.
// Safe from another thread than the one blocked in a call on comm.
void abort_comm(dcComm* comm);
// Marks comm failed with status from a caller thread (timeouts, revoke); the other ranks are told.
void fail_comm_from_caller(dcComm* comm, const Status& status);

std::shared_ptr<const PreparedPlan> prepared_plan(dcComm* comm, const PlanRequest& request);

}  // namespace dc
