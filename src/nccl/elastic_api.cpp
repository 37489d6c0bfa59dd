// Growing a communicator (NCCL 2.30): ncclCommGetUniqueId and ncclCommGrow, onto dcCommGrowId and
// dcCommGrow (src/core/grow.cpp). Arguments are checked here as NCCL states them.
#include <cstring>

#include "src/nccl/checks.h"
#include "src/nccl/comm_config.h"
#include "src/nccl/device_runtime.h"

using dc::nccl::comm_shape;
using dc::nccl::guarded;
using dc::nccl::invalid_argument;
using dc::nccl::require_output;
using dc::nccl::to_dc;
using dc::nccl::to_nccl;

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommGetUniqueId, ncclComm_t comm, ncclUniqueId* uniqueId) {
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclCommGetUniqueId");
    require_output(uniqueId, "ncclCommGetUniqueId", "uniqueId");
    dcUniqueId native;
    const dcResult_t result = dcCommGrowId(to_dc(comm), &native);
    if (result == dcSuccess) std::memcpy(uniqueId, &native, sizeof native);
    return to_nccl(result);
  });
}

// Existing ranks: comm, rank -1, and the id on the one rank that got it. New ranks: comm NULL,
// the id and their rank in [the communicator's size, nRanks).
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommGrow, ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank,
                  ncclComm_t* newcomm, ncclConfig_t* config) {
  return guarded([&]() -> ncclResult_t {
    constexpr const char* kFunction = "ncclCommGrow";
    require_output(newcomm, kFunction, "newcomm");
    if (comm != nullptr) {
      dc::nccl::wait_for_device_calls(comm);  // the bridge's thread is the communicator's user until then
      const dc::nccl::CommShape shape = comm_shape(comm, kFunction);
      if (rank != -1) {
        invalid_argument(kFunction, "an existing rank passes rank -1, not " + std::to_string(rank));
      }
      if (nRanks <= shape.nranks) {
        invalid_argument(kFunction, "nRanks " + std::to_string(nRanks) + " does not grow the " +
                                        std::to_string(shape.nranks) + "-rank communicator");
      }
    } else {
      if (uniqueId == nullptr) invalid_argument(kFunction, "a new rank must pass the uniqueId");
      if (nRanks < 1 || rank < 0 || rank >= nRanks) {
        invalid_argument(kFunction,
                         "rank " + std::to_string(rank) + " is not in [0, nRanks = " + std::to_string(nRanks) + ")");
      }
    }
    const dcConfig_t native_config =
        config != nullptr ? dc::nccl::comm_config_from_nccl(*config) : dc::nccl::default_comm_config();
    dcUniqueId native_id;
    if (uniqueId != nullptr) native_id = to_dc(*uniqueId);
    dcComm_t native = nullptr;
    const dcResult_t result =
        dcCommGrow(to_dc(comm), nRanks, uniqueId != nullptr ? &native_id : nullptr, rank, &native, &native_config);
    // A nonblocking communicator is handed out while its set-up is still in progress.
    if (result == dcSuccess || result == dcInProgress) *newcomm = to_nccl(native);
    return to_nccl(result);
  });
}
