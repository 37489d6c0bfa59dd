// Bootstrap through the c10d store torch hands the backend's creator (a PrefixStore per group),
// so DeepComm's rendezvous needs no port of its own from the launcher: dcGetUniqueId picks it.
#include "backend.h"

#include <c10/util/Exception.h>

#include <cstring>

namespace deepcomm_torch {

dcUniqueId exchange_unique_id(const c10::intrusive_ptr<c10d::Store>& store, int rank) {
  // The n-th communicator this rank creates on this store meets the others' n-th (a group created
  // twice on one store, e.g. for two device types, must not reuse a spent id).
  const int64_t generation = store->add("deepcomm/created/" + std::to_string(rank), 1);
  const std::string key = "deepcomm/unique_id/" + std::to_string(generation);
  dcUniqueId id;
  if (rank == 0) {
    dcResult_t result = dcGetUniqueId(&id);
    TORCH_CHECK(result == dcSuccess, "deepcomm: dcGetUniqueId: ", dcGetErrorString(result), ": ", dcGetLastError());
    store->set(key, std::vector<uint8_t>(id.internal, id.internal + sizeof id.internal));
  } else {
    std::vector<uint8_t> bytes = store->get(key);
    TORCH_CHECK(bytes.size() == sizeof id.internal, "deepcomm: the unique id in the store has ", bytes.size(),
                " bytes, expected ", sizeof id.internal);
    std::memcpy(id.internal, bytes.data(), bytes.size());
  }
  return id;
}

}  // namespace deepcomm_torch
