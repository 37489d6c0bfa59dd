// The communicator: one rank's view of a group of ranks. It holds the settings, the caller-side
// state and the executor's state of the communicator (src/exec/exec_comm.h). Operations on one
// communicator are issued from one thread at a time (NCCL's rule); collectives run on the progress
// engine in issue order.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "src/core/config.h"
#include "src/exec/exec_comm.h"
#include "src/plan/plan.h"
#include "topology/cluster_view.h"

namespace dc {

class OpBatch;
struct Registration;
struct PreparedPlan;

// A user-created pre-multiplied-sum operator.
struct PreMulSumOp {
  dcDataType_t datatype = dcFloat32;
  uint8_t scalar[8] = {};
  bool in_use = false;
};

}  // namespace dc

struct dcComm {
  // What the executor keeps of this communicator: identity, connections, queue, failure state.
  dc::ExecComm exec;
  std::string name;
  dc::Config config;
  std::shared_ptr<const dc::ClusterView> cluster;  // where the ranks are (set when connected)

  // Caller side (the one thread issuing operations).
  uint64_t next_split_seq = 0;
  uint64_t next_shrink_seq = 0;
  uint32_t next_window_number = 0;  // windows are numbered in registration order (one_sided.h)
  // The grow id this rank got (dcCommGrowId) and no grow consumed yet, and when its root stops.
  std::optional<dcUniqueId> grow_id;
  std::chrono::steady_clock::time_point grow_id_expiry;
  std::vector<dc::PreMulSumOp> premul_ops;
  std::map<dc::PlanRequest::Key, std::shared_ptr<const dc::PreparedPlan>> plan_cache;

  // Nonblocking communicators: set-up running on init_thread, and the batches of calls that
  // returned dcInProgress (dcCommGetAsyncError reports progress until they finished).
  std::atomic<bool> initializing{false};
  std::thread init_thread;
  std::mutex pending_mutex;
  std::vector<std::shared_ptr<dc::OpBatch>> pending;

  // Memory registered with this communicator (registration.h).
  std::mutex registrations_mutex;
  std::vector<std::unique_ptr<dc::Registration>> registrations;

  // Between dcCommSuspend and dcCommResume (suspend.h): operations are refused.
  std::atomic<bool> suspended{false};

  // API calls inside this communicator right now (CommUse), guarded by the registry's lock.
  int users = 0;

  dcComm();  // out of line, where the members' types are complete
  ~dcComm();
};

namespace dc {

// Registry of live communicators, so a destroyed or bogus handle is an error, not a crash.
void register_comm(dcComm* comm);
// Throws dc::Error(dcInvalidArgument) for NULL or a handle that is not a live communicator.
dcComm* checked_comm(dcComm* comm);

// An API call's hold on a live communicator: destroy and abort, from any thread, do not free a
// communicator while a call holds it, and a call entering after they began finds it invalid.
class CommUse {
 public:
  explicit CommUse(dcComm* comm);  // throws like checked_comm
  ~CommUse();
  CommUse(const CommUse&) = delete;
  CommUse& operator=(const CommUse&) = delete;
  dcComm* get() const { return comm_; }

 private:
  dcComm* comm_;
};

// Takes comm out of the registry, so no call enters it any more; throws like checked_comm when it
// is not there (another thread destroys or aborts it). The caller is then its only owner.
void retire_comm(dcComm* comm);
// Waits until no call is inside a retired comm, for at most timeout_ms. False when some still
// are: the communicator must not be freed then.
bool wait_until_unused(dcComm* comm, int timeout_ms);

// Creates a communicator of nranks from a unique id (blocking).
dcComm* init_rank(int nranks, const dcUniqueId& id, int rank, const dcConfig_t* config);
// The same with several rendezvous roots (ranks spread over them; see scalable_init.cpp).
dcComm* init_rank_scalable(int nranks, int rank, const std::vector<dcUniqueId>& ids, const dcConfig_t* config);
// A communicator of nranks that joins the rendezvous of the id obtain_id returns; obtain_id runs in
// the set-up (on a nonblocking communicator's set-up thread), so it may wait for an exchange.
dcComm* init_rank_when_id_known(int nranks, int rank, std::function<dcUniqueId()> obtain_id, const dcConfig_t* config);
// Elastic communicators (grow.cpp): a one-time grow id for comm, held by this rank until a grow
// consumes it; the grown communicator, on an existing rank (id: the one this rank got, or NULL);
// and on a new rank, which joins with the id and its rank in [comm's size, nranks).
void issue_grow_id(dcComm* comm, dcUniqueId* id);
dcComm* grow_comm(dcComm* comm, int nranks, const dcUniqueId* id, const dcConfig_t* config);
dcComm* join_grow(int nranks, const dcUniqueId& id, int rank, const dcConfig_t* config);
// Creates the child of comm for (color, key); returns nullptr for DC_SPLIT_NOCOLOR.
dcComm* split_comm(dcComm* comm, int color, int key, const dcConfig_t* config);
// The communicator of comm's ranks not in `excluded`, on comm's connections (no rendezvous).
dcComm* shrink_comm(dcComm* comm, std::vector<int> excluded, const dcConfig_t* config, int flags);
// Waits for this rank's outstanding operations, then frees the communicator. Throws
// dc::Error(dcInvalidArgument) when comm is not live (also when another thread destroys it).
void destroy_comm(dcComm* comm);
// Fails every pending operation at once (the other ranks are told), then frees the communicator
// once the calls other threads are blocked in on it returned. Safe from any thread.
void abort_comm(dcComm* comm);

std::shared_ptr<const PreparedPlan> prepared_plan(dcComm* comm, const PlanRequest& request);

}  // namespace dc
