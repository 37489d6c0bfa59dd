// Helpers of the fault tests: timing a call, and the shared-memory names a run leaves behind.
#pragma once

#include <chrono>
#include <set>
#include <string>

#include "deepcomm/deepcomm.h"

namespace dctest {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Names in /dev/shm that look like DeepComm's.
std::set<std::string> deepcomm_shm_names();

// Why communicators cannot use DEEPCOMM_TRANSPORT=transport here ("" when they can): UCX may be
// absent (built without libucx-dev, or libucp.so.0 missing). Found in a child process.
std::string transport_unavailable(const char* transport);
// The transport's name as part of a test name ("ucx-all" -> "ucx_all").
std::string test_name(const char* transport);

// One collective of the given kind on small buffers (a group send/recv ring for dcCollSend).
dcResult_t run_one(dcComm_t comm, dcCollective_t kind, int rank, int n);

}  // namespace dctest
