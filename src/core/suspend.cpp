#include "src/core/suspend.h"

#include <mutex>
#include <string>

#include "base/error.h"
#include "device/encoder_pool.h"
#include "src/core/issue.h"
#include "src/exec/engine_call.h"

namespace dc {

void require_not_suspended(const dcComm* comm, const char* what) {
  if (comm->suspended.load()) {
    fail(dcInvalidUsage, std::string("DeepComm: ") + what +
                             " on a suspended communicator; resume it first (dcCommResume, ncclCommResume)");
  }
}

void suspend_comm(dcComm* comm) {
  if (comm->suspended.load()) fail(dcInvalidUsage, "DeepComm: the communicator is suspended already");
  if (comm->initializing.load()) fail(dcInvalidUsage, "DeepComm: the communicator is still being set up");
  // Its sequence numbers are taken and the other ranks will run theirs: part of the group's work.
  if (queued_in_group(comm)) {
    fail(dcInvalidUsage,
         "DeepComm: cannot suspend a communicator with operations queued in an open group; end the group "
         "(dcGroupEnd, ncclGroupEnd) first");
  }
  // A nonblocking call that returned dcInProgress counts as in flight until it finished.
  const bool calls_pending = async_state(comm) == dcInProgress;
  std::lock_guard<std::mutex> lock(comm->exec.inflight_mutex);
  if (calls_pending || comm->exec.inflight > 0) {
    fail(dcInvalidUsage, "DeepComm: cannot suspend a communicator with " + std::to_string(comm->exec.inflight) +
                             " operation(s) in flight; wait for them (dcCommFinalize) first");
  }
  // No operation in flight: the engine does not touch the scratch buffers (the lock orders this
  // after the last operation's end). Marked first, so no new operation starts while they go.
  comm->suspended.store(true);
  comm->exec.release_scratch();
  // The connections' segments and bounce buffers: a split communicator sharing a connection may be
  // using them right now, and then they stay (held_bytes keeps counting them).
  call_on_engine([comm] { comm->exec.release_idle_connections(); }, comm->exec.engine_timeout_ms,
                 "releasing the connections' staging memory");
  device::release_idle_encoders();  // the codec steps' scratch, kept for reuse by every communicator
}

void resume_comm(dcComm* comm) {
  if (!comm->suspended.load()) fail(dcInvalidUsage, "DeepComm: the communicator is not suspended");
  comm->suspended.store(false);  // scratch buffers are made again by the next operation needing them
}

dcCommMemory_t comm_memory(const dcComm* comm) {
  // A nonblocking set-up writes the connections and the board on another thread meanwhile.
  if (comm->initializing.load()) fail(dcInvalidUsage, "DeepComm: the communicator is still being set up");
  dcCommMemory_t memory{};
  memory.releasableBytes = comm->exec.releasable_bytes();
  memory.persistentBytes = comm->exec.persistent_bytes();
  memory.suspended = comm->suspended.load() ? 1 : 0;
  return memory;
}

}  // namespace dc
