// Ranks of an NCCL program as forked processes, for the tests of device buffers through
// libnccl.so.2 (tests/nccl/device_bridge_test.cpp, tests/cuda_plugin/gpu_bridge_test.cpp).
// Header-only: those tests link libnccl.so.2, not DeepComm's objects.
#pragma once

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "deepcomm/nccl.h"
#include "tests/support/forked_processes.h"

namespace dctest {

// Says what went wrong on a rank (stderr) and counts it: body results add these up.
inline int complain(int rank, const std::string& what) {
  std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  return 1;
}

// Forks nranks processes with env set; each makes its communicator from the parent's unique id
// (prepare runs first, e.g. to pick its device) and runs body. The ranks in killed are to die of
// SIGKILL; then the others do not destroy their communicators. "" when all ended as expected.
inline std::string run_nccl_ranks(int nranks, const std::vector<std::pair<std::string, std::string>>& env,
                                  const std::function<int(int rank, int n, ncclComm_t comm)>& body,
                                  const std::vector<int>& killed = {}, int timeout_s = 120,
                                  const std::function<int(int rank)>& prepare = nullptr) {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return ncclGetLastError(nullptr);
  ForkedProcesses ranks;
  for (int rank = 0; rank < nranks; ++rank) {
    const bool dies = std::find(killed.begin(), killed.end(), rank) != killed.end();
    ranks.start(
        "rank " + std::to_string(rank), env,
        [&, rank] {
          if (prepare && prepare(rank) != 0) return 1;
          ncclComm_t comm;
          if (ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess)
            return complain(rank, ncclGetLastError(nullptr));
          const int failed = body(rank, nranks, comm);
          if (killed.empty()) ncclCommDestroy(comm);
          return failed;
        },
        dies);
  }
  return ranks.finish(timeout_s);
}

}  // namespace dctest
