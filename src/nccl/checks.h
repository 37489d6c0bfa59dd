// Argument checks shared by the NCCL 2.30 entry points, and the error of the device-API functions
// DeepComm does not implement yet (ncclInvalidUsage with a message naming the function and the version).
#pragma once

#include <string>

#include "src/nccl/api.h"

namespace dc::nccl {

// The version in "no device-initiated API yet" messages.
inline std::string deepcomm_version() {
  return std::to_string(DEEPCOMM_VERSION_MAJOR) + "." + std::to_string(DEEPCOMM_VERSION_MINOR) + "." +
         std::to_string(DEEPCOMM_VERSION_PATCH);
}

[[noreturn]] inline void no_device_api(const char* function) {
  fail(dcInvalidUsage, std::string("DeepComm: ") + function + ": DeepComm " + deepcomm_version() +
                           " has no device-initiated API yet (host memory only)");
}

[[noreturn]] inline void invalid_argument(const char* function, const std::string& what) {
  fail(dcInvalidArgument, std::string("DeepComm: ") + function + ": " + what);
}

inline void require_input(const void* pointer, const char* function, const char* argument) {
  if (pointer == nullptr) invalid_argument(function, std::string(argument) + " must not be NULL");
}

// Size and rank of a live communicator; throws the native API's error for anything else.
struct CommShape {
  int nranks = 0;
  int rank = 0;
};

inline CommShape comm_shape(ncclComm_t comm, const char* function) {
  CommShape shape;
  dcResult_t result = dcCommCount(to_dc(comm), &shape.nranks);
  if (result == dcSuccess) result = dcCommRank(to_dc(comm), &shape.rank);
  if (result != dcSuccess) {
    std::string message = dcGetLastError() != nullptr ? dcGetLastError() : "";
    const std::string prefix = "DeepComm: ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    fail(result, prefix + function + ": " + (message.empty() ? "not a communicator" : message));
  }
  return shape;
}

// The world ranks [first, first + size) of the rank's LSA team (dcCommLoadStoreTeam: this host's
// ranks when their windows can be mapped into one another, else the rank alone).
struct LsaTeam {
  int first = 0;
  int size = 1;
};

inline LsaTeam lsa_team(ncclComm_t comm, const char* function) {
  comm_shape(comm, function);
  LsaTeam team;
  const dcResult_t result = dcCommLoadStoreTeam(to_dc(comm), &team.first, &team.size);
  if (result != dcSuccess) fail(result, std::string("DeepComm: ") + function + ": " + dcGetLastError());
  return team;
}

inline void require_peer(const CommShape& shape, int peer, const char* function) {
  if (peer < 0 || peer >= shape.nranks) {
    invalid_argument(function, "peer " + std::to_string(peer) + " is not a rank of the " +
                                   std::to_string(shape.nranks) + "-rank communicator");
  }
}

}  // namespace dc::nccl
