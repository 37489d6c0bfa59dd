// Growing a communicator (NCCL 2.30): ncclCommGetUniqueId and ncclCommGrow. Arguments are checked
// as NCCL states them; the grow itself is not implemented yet (issue 34).
#include "src/nccl/checks.h"
#include "src/nccl/comm_config.h"

using dc::nccl::comm_shape;
using dc::nccl::guarded;
using dc::nccl::invalid_argument;
using dc::nccl::not_implemented;
using dc::nccl::require_output;

DEEPCOMM_NCCL_API(ncclResult_t, ncclCommGetUniqueId, ncclComm_t comm, ncclUniqueId* uniqueId) {
  return guarded([&]() -> ncclResult_t {
    comm_shape(comm, "ncclCommGetUniqueId");
    require_output(uniqueId, "ncclCommGetUniqueId", "uniqueId");
    not_implemented("ncclCommGetUniqueId");
  });
}

// Existing ranks: comm, rank -1, and the id on the one rank that got it. New ranks: comm NULL,
// the id and their rank in [0, nRanks).
DEEPCOMM_NCCL_API(ncclResult_t, ncclCommGrow, ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank,
                  ncclComm_t* newcomm, ncclConfig_t* config) {
  return guarded([&]() -> ncclResult_t {
    constexpr const char* kFunction = "ncclCommGrow";
    require_output(newcomm, kFunction, "newcomm");
    if (comm != nullptr) {
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
    if (config != nullptr) dc::nccl::comm_config_from_nccl(*config);
    not_implemented(kFunction);
  });
}
