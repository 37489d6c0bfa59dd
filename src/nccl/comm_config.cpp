#include "src/nccl/comm_config.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "base/error.h"
#include "src/nccl/settings.h"

namespace dc::nccl {

namespace {

constexpr unsigned int kConfigMagic = NCCL_API_MAGIC;
// Before 2.14 the size field was not trusted and the struct ended after `blocking`.
constexpr unsigned int kFirstSizedConfigVersion = NCCL_VERSION(2, 14, 0);
constexpr std::size_t kUnsizedConfigBytes = offsetof(ncclConfig_t, blocking) + sizeof(int);

int blocking_from_environment() { return config::flag(settings::kNcclCommBlocking) ? 1 : 0; }

}  // namespace

dcConfig_t default_comm_config() {
  dcConfig_t config = DC_CONFIG_INIT;
  config.blocking = blocking_from_environment();
  return config;
}

dcConfig_t comm_config_from_nccl(const ncclConfig_t& user) {
  if (user.magic != kConfigMagic) {
    fail(dcInvalidArgument, "DeepComm: ncclConfig_t was not initialized with NCCL_CONFIG_INITIALIZER (bad magic)");
  }
  ncclConfig_t known = NCCL_CONFIG_INITIALIZER;
  const std::size_t readable = user.version < kFirstSizedConfigVersion ? kUnsizedConfigBytes : user.size;
  // Fields after the header are copied only if the caller's struct has them.
  const std::size_t begin = offsetof(ncclConfig_t, blocking);
  const std::size_t end = std::min(readable, sizeof(ncclConfig_t));
  if (end > begin) {
    std::memcpy(reinterpret_cast<char*>(&known) + begin, reinterpret_cast<const char*>(&user) + begin, end - begin);
  }

  dcConfig_t config = default_comm_config();
  if (known.blocking != NCCL_CONFIG_UNDEF_INT) {
    if (known.blocking != 0 && known.blocking != 1) {
      fail(dcInvalidArgument, "DeepComm: ncclConfig_t.blocking must be 0 or 1, not " + std::to_string(known.blocking));
    }
    config.blocking = known.blocking;
  }
  if (known.commName != NCCL_CONFIG_UNDEF_PTR) config.commName = known.commName;
  // Contexts of the one-sided operations (2.30); 0 turns them off.
  if (known.numRmaCtx != NCCL_CONFIG_UNDEF_INT) {
    if (known.numRmaCtx < 0) {
      fail(dcInvalidArgument,
           "DeepComm: ncclConfig_t.numRmaCtx must not be negative, not " + std::to_string(known.numRmaCtx));
    }
    config.rmaContexts = known.numRmaCtx;
  }
  return config;
}

}  // namespace dc::nccl
