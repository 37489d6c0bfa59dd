#include "transports/ucx/ucx_policy.h"

#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "base/log.h"
#include "base/net_interface.h"

namespace dc {

namespace {

bool user_set(const char* name) { return std::getenv(name) != nullptr; }

}  // namespace

std::string ucx_net_devices() {
  std::string devices = chosen_interface().name;
  // RDMA ports are named <device>:<port> in UCX; they carry no listening TCP socket.
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& device : fs::directory_iterator("/sys/class/infiniband", ec)) {
    std::error_code port_ec;
    for (const auto& port : fs::directory_iterator(device.path() / "ports", port_ec))
      devices += "," + device.path().filename().string() + ":" + port.path().filename().string();
  }
  return devices;
}

void apply_memory_hook_policy(const UcxApi& api) {
  ucm_global_config_t opts = *api.ucm_options;
  if (!user_set("UCX_MEM_MALLOC_HOOKS")) opts.enable_malloc_hooks = 0;
  if (!user_set("UCX_MEM_MALLOC_RELOC")) opts.enable_malloc_reloc = 0;
  if (!user_set("UCX_MEM_DYNAMIC_MMAP_THRESH")) opts.enable_dynamic_mmap_thresh = 0;
  api.set_ucm_options(&opts);
}

void restrict_devices(const UcxApi& api, ucp_config_t* config) {
  if (user_set("UCX_NET_DEVICES")) return;
  const std::string devices = ucx_net_devices();
  const ucs_status_t s = api.config_modify(config, "NET_DEVICES", devices.c_str());
  if (s != UCS_OK) fail(dcSystemError, "DeepComm: cannot restrict UCX to " + devices + ": " + api.status_string(s));
  DC_INFO("ucx: UCX_NET_DEVICES=%s", devices.c_str());
}

}  // namespace dc
