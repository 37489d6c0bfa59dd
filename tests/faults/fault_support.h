// Helpers of the fault tests: timing a call, one collective of any kind.
#pragma once

#include <chrono>
#include <set>
#include <string>

#include "deepcomm/deepcomm.h"
#include "tests/support/process_state.h"
#include "tests/support/transport_probe.h"

namespace dctest {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One collective of the given kind on small buffers (a group send/recv ring for dcCollSend).
dcResult_t run_one(dcComm_t comm, dcCollective_t kind, int rank, int n);

}  // namespace dctest
