// libFuzzer target: unique ids as a program may hand them to DeepComm (any 128 bytes, or hex text
// from DEEPCOMM_UNIQUE_ID): validation either refuses them with dc::Error or they decode to a root
// address and credentials that encode back to the same id.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/error.h"
#include "src/core/bootstrap.h"
#include "src/core/bootstrap/unique_id_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dcUniqueId id{};
  std::memcpy(id.internal, data, std::min(size, sizeof id.internal));
  try {
    dc::validate_unique_id(id);
    const dc::RootAddress root = dc::decode_root_address(id);
    const dc::IdCredentials credentials = dc::unique_id_credentials(id);
    const dcUniqueId again = dc::encode_unique_id(root, credentials);
    if (std::memcmp(again.internal, id.internal, sizeof id.internal) != 0) {
      std::fprintf(stderr, "a valid id does not encode back to itself\n");
      std::abort();
    }
  } catch (const dc::Error&) {}
  try {
    const dcUniqueId parsed = dc::unique_id_from_hex(std::string(reinterpret_cast<const char*>(data), size));
    if (dc::unique_id_to_hex(parsed).size() != 2 * sizeof parsed.internal) std::abort();
  } catch (const dc::Error&) {}
  return 0;
}
