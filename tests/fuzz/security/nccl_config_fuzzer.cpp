// libFuzzer target: ncclConfig_t as a program of any NCCL version may pass it (any bytes, any
// size/version/magic): it is refused with dc::Error or read into options that make sense.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/error.h"
#include "src/nccl/comm_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ncclConfig_t config;
  std::memset(&config, 0, sizeof config);
  std::memcpy(&config, data, std::min(size, sizeof config));
  try {
    const dcConfig_t native = dc::nccl::comm_config_from_nccl(config);
    if (native.blocking != 0 && native.blocking != 1) {
      std::fprintf(stderr, "blocking = %d\n", native.blocking);
      std::abort();
    }
  } catch (const dc::Error&) {}
  return 0;
}
