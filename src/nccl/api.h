// What every NCCL entry point of libnccl.so.2 is made of: the export macro that defines ncclX and
// its pncclX twin, the exception guard of the C ABI (base/c_abi_guard.h), and conversions to the
// native API.
#pragma once

#include <cstring>
#include <string>
#include <utility>

#include "base/c_abi_guard.h"
#include "base/error.h"
#include "deepcomm/deepcomm.h"
#include "deepcomm/nccl.h"

// Defines the exported function `name` and exports `pname` as an alias of it. As in NVIDIA's
// library, ncclX is weak so that a profiler can interpose it and still reach pncclX.
#define DEEPCOMM_NCCL_API(ret, name, ...)                                                   \
  extern "C" __attribute__((visibility("default"), alias(#name))) ret p##name(__VA_ARGS__); \
  extern "C" __attribute__((visibility("default"), weak)) ret name(__VA_ARGS__)

namespace dc::nccl {

// Runs the body of an API function under the C-ABI guard (base/c_abi_guard.h).
template <typename Body>
ncclResult_t guarded(Body&& body) noexcept {
  return guard_c_abi<ncclResult_t>(std::forward<Body>(body));
}

inline ncclResult_t to_nccl(dcResult_t result) { return static_cast<ncclResult_t>(result); }
inline dcComm_t to_dc(ncclComm_t comm) { return reinterpret_cast<dcComm_t>(comm); }
inline ncclComm_t to_nccl(dcComm_t comm) { return reinterpret_cast<ncclComm_t>(comm); }
// Enum values are NCCL's (see deepcomm.h), so these are casts; the native API validates them.
inline dcDataType_t to_dc(ncclDataType_t type) { return static_cast<dcDataType_t>(type); }
inline dcRedOp_t to_dc(ncclRedOp_t op) { return static_cast<dcRedOp_t>(op); }

// Output pointers that this layer fills itself must be checked here, not by the native API.
inline void require_output(const void* pointer, const char* function, const char* argument) {
  if (pointer == nullptr) {
    fail(dcInvalidArgument, std::string("DeepComm: ") + function + ": " + argument + " must not be NULL");
  }
}

static_assert(sizeof(ncclUniqueId) == sizeof(dcUniqueId));

inline dcUniqueId to_dc(const ncclUniqueId& id) {
  dcUniqueId native;
  std::memcpy(&native, &id, sizeof native);
  return native;
}

}  // namespace dc::nccl
