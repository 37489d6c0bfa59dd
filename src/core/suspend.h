// Suspending a communicator (dcCommSuspend, dcCommResume) and the memory it holds (dcCommMemory).
// Suspending is local: it frees what the communicator makes again on demand (scratch buffers) and
// marks it suspended, so that operations on it are refused until it is resumed. What needs the
// peers to be made again (connections, their staging segments, the flat board) and what is state
// (error-feedback residuals, registrations) stays; dcCommMemory reports it as persistent.
#pragma once

#include "deepcomm/deepcomm.h"
#include "src/core/communicator.h"

namespace dc {

// Throws dc::Error(dcInvalidUsage) when comm is suspended; `what` names the refused call.
void require_not_suspended(const dcComm* comm, const char* what);

// Throws dc::Error(dcInvalidUsage) when comm is suspended already, still being set up, has an
// operation in flight (a call that returned dcInProgress included) or operations queued in the
// calling thread's open group.
void suspend_comm(dcComm* comm);
// Throws dc::Error(dcInvalidUsage) when comm is not suspended.
void resume_comm(dcComm* comm);

// Throws dc::Error(dcInvalidUsage) while comm is still being set up.
dcCommMemory_t comm_memory(const dcComm* comm);

}  // namespace dc
