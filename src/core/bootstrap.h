// Bootstrap: the rendezvous that lets nranks processes (or threads) find each other from a
// dcUniqueId. The process that makes the id hosts the root (a TCP server on its own thread, apart
// from any rank state) until all ranks joined or the deadline passed. Each rank sends the root a
// blob (its transport addresses, host identity, agreed configuration) and receives every rank's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/handshake.h"
#include "deepcomm/deepcomm.h"

namespace dc {

// Fills *id and starts the root in this process. With NCCL_COMM_ID=host:port set, the id names that
// address instead and rank 0 hosts the root there during bootstrap_allgather (as NCCL does).
void make_unique_id(dcUniqueId* id);

// The 64-bit value naming the rendezvous, shared by all ranks of the communicator (no credential).
uint64_t unique_id_session(const dcUniqueId& id);
// The 128-bit secret every connection of the communicator proves knowledge of (handshake.h).
Secret unique_id_secret(const dcUniqueId& id);

// Throws dc::Error(dcInvalidArgument) when the id was not made by make_unique_id (bad magic, an
// unknown version, flags or bytes set where none belong).
void validate_unique_id(const dcUniqueId& id);

// Sends blob to the root named by id as `rank` of `nranks` and returns every rank's blob (index =
// rank). Throws dc::Error (dcSystemError / dcRemoteError / dcInvalidUsage) on failure or when
// timeout_ms passes.
std::vector<std::string> bootstrap_allgather(const dcUniqueId& id, int rank, int nranks, const std::string& blob,
                                             int timeout_ms);

// Rank, size and id from the launcher's environment: DeepComm's launcher (DEEPCOMM_RANK,
// DEEPCOMM_NRANKS, DEEPCOMM_UNIQUE_ID as hex), PMIx under mpirun/srun (rank 0 makes the id and
// publishes it), or torchrun's RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT. Throws dc::Error
// (dcInvalidUsage) with a message saying what was looked for when none is found.
struct LaunchInfo {
  int rank = 0;
  int nranks = 1;
  dcUniqueId id{};
  std::string source;  // "deepcomm-run", "pmix", "torchrun"
};
LaunchInfo launch_info_from_env(int timeout_ms);

std::string unique_id_to_hex(const dcUniqueId& id);
dcUniqueId unique_id_from_hex(const std::string& hex);  // throws dcInvalidArgument

}  // namespace dc
