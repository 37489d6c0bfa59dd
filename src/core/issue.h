// Issuing operations: validation of arguments, group batching (per thread), blocking waits and
// requests. This is where the API's completion semantics live.
#pragma once

#include <functional>

#include "deepcomm/deepcomm.h"
#include "src/core/communicator.h"
#include "src/exec/operation.h"

struct dcRequest {
  std::shared_ptr<dc::OpBatch> batch;
  int timeout_ms = 0;
};

namespace dc {

// The planner's view of the communicator: rank, size, cluster view, agreed plan settings.
CommView plan_view(const dcComm* comm);
// What shapes the plan of an operation on this communicator: the one place a request is built.
PlanRequest plan_request(const dcComm* comm, const OpArgs& args);

// Throws dc::Error(dcInvalidArgument) for a bad argument; touches no buffer.
void validate(dcComm* comm, const OpArgs& args);

// Validates, then runs the operation: complete on return, queued in the thread's group, or started
// with *request filled in. On a nonblocking communicator it starts the operation and returns
// dcInProgress (dcCommGetAsyncError reports its progress).
dcResult_t issue(dcComm* comm, const OpArgs& args, dcRequest_t* request);

// The error of an operation that made no progress within timeout_ms (the communicator fails with it).
Status timeout_status(int timeout_ms);

// Waits for batch until timeout_ms; past it, fails comms with timeout_status (their operations
// end) and waits a little more. Throws the batch's error.
void wait_batch(const std::shared_ptr<OpBatch>& batch, int timeout_ms, const std::vector<dcComm*>& comms);

// An all-reduce (min) of one value on the engine, for set-up steps (no validation, no flat path).
int32_t agree_min(dcComm* comm, int32_t value);

void group_start();
// Whether this thread is between a group start and its end.
bool group_open();
// True when this thread's open group holds operations of comm (accepted, not started yet).
bool queued_in_group(const dcComm* comm);
// Inside a group: keeps a one-sided call (one_sided.h) for the group's outermost end, where it
// runs after the group's operations (puts and signals in call order, then the waits). False
// outside a group: the caller runs it now.
bool defer_one_sided(std::function<void()> call, bool wait);
// dcInProgress when the group holds operations of a nonblocking communicator (they were started).
dcResult_t group_end();

// Ends the outermost group without running it and returns the estimated seconds of its operations
// (cost model; collectives of one communicator add up, communicators run side by side). Every rank
// must simulate the same group, as the operations' sequence numbers were taken.
double group_simulate_end();

// dcInProgress while a nonblocking communicator sets up or runs calls that returned dcInProgress,
// then dcSuccess, or the communicator's error.
dcResult_t async_state(dcComm* comm);

// Waits for a request (bounded by its communicator's timeout) and frees it; throws its error.
void wait_request(dcRequest* request);
// True (and the request freed, its error thrown) when complete.
bool test_request(dcRequest* request);

}  // namespace dc
