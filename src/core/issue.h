// Issuing operations: validation of arguments, group batching (per thread), blocking waits and
// requests. This is where the API's completion semantics live.
#pragma once

#include "deepcomm/deepcomm.h"
#include "src/exec/operation.h"

struct dcRequest {
  std::shared_ptr<dc::OpBatch> batch;
  int timeout_ms = 0;
};

namespace dc {

// Throws dc::Error(dcInvalidArgument) for a bad argument; touches no buffer.
void validate(dcComm* comm, const OpArgs& args);

// Validates, then runs the operation: complete on return, queued in the thread's group, or started
// with *request filled in.
void issue(dcComm* comm, const OpArgs& args, dcRequest_t* request);

void group_start();
void group_end();

// Waits for a request (bounded by its communicator's timeout) and frees it; throws its error.
void wait_request(dcRequest* request);
// True (and the request freed, its error thrown) when complete.
bool test_request(dcRequest* request);

}  // namespace dc
