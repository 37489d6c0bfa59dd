#include "transports/ucx/ucx_policy.h"

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/config_table.h"
#include "base/error.h"
#include "base/log.h"
#include "base/net_interface.h"
#include "transports/settings.h"

namespace dc {

namespace {

bool user_set(const char* name) { return std::getenv(name) != nullptr; }

enum class UcxInPlace { Auto, Always, Never };  // kUcxInPlace's words

// The RDMA ports as UCX names them, <device>:<port>; none where the kernel has no RDMA subsystem.
std::vector<std::string> rdma_ports() {
  namespace fs = std::filesystem;
  std::vector<std::string> ports;
  std::error_code ec;
  for (const auto& device : fs::directory_iterator("/sys/class/infiniband", ec)) {
    std::error_code port_ec;
    for (const auto& port : fs::directory_iterator(device.path() / "ports", port_ec))
      ports.push_back(device.path().filename().string() + ":" + port.path().filename().string());
  }
  return ports;
}

// Whether UCX_TLS ("all" when unset; "a,b" or "^a,b") enables one of `transports`, a family
// also named by any of `aliases`.
bool tls_enables(const std::set<std::string>& aliases, const std::set<std::string>& transports) {
  const char* value = std::getenv("UCX_TLS");
  std::string tls = value && *value ? value : "all";
  const bool excluding = tls[0] == '^';
  if (excluding) tls.erase(0, 1);
  std::set<std::string> listed;
  std::istringstream items(tls);
  for (std::string item; std::getline(items, item, ',');) listed.insert(item);
  auto any_listed = [&](const std::set<std::string>& names) {
    for (const std::string& n : names)
      if (listed.count(n)) return true;
    return false;
  };
  if (!excluding) return listed.count("all") || any_listed(aliases) || any_listed(transports);
  if (any_listed(aliases)) return false;
  for (const std::string& t : transports)
    if (!listed.count(t)) return true;
  return false;
}

}  // namespace

std::string ucx_net_devices() {
  std::string devices = chosen_interface().name;
  for (const std::string& port : rdma_ports()) devices += "," + port;  // they carry no TCP socket
  return devices;
}

void apply_memory_hook_policy(const UcxApi& api) {
  ucm_global_config_t opts = *api.ucm_options;
  if (!user_set("UCX_MEM_MALLOC_HOOKS")) opts.enable_malloc_hooks = 0;
  if (!user_set("UCX_MEM_MALLOC_RELOC")) opts.enable_malloc_reloc = 0;
  if (!user_set("UCX_MEM_DYNAMIC_MMAP_THRESH")) opts.enable_dynamic_mmap_thresh = 0;
  api.set_ucm_options(&opts);
}

bool ucx_moves_in_place(bool same_host) {
  switch (static_cast<UcxInPlace>(config::choice(settings::kUcxInPlace))) {
    case UcxInPlace::Always: return true;
    case UcxInPlace::Never: return false;
    case UcxInPlace::Auto: break;
  }
  // The transports whose rendezvous the receiver pulls: single copy on one host, RDMA across.
  if (same_host) return tls_enables({"sm", "shm"}, {"cma", "knem", "xpmem"});
  return !rdma_ports().empty() && tls_enables({"ib", "rc", "dc", "ud"}, {"rc_v", "rc_x", "rc_mlx5", "dc_x", "dc_mlx5",
                                                                         "ud_v", "ud_x", "ud_mlx5"});
}

void restrict_devices(const UcxApi& api, ucp_config_t* config) {
  if (user_set("UCX_NET_DEVICES")) return;
  const std::string devices = ucx_net_devices();
  const ucs_status_t s = api.config_modify(config, "NET_DEVICES", devices.c_str());
  if (s != UCS_OK) fail(dcSystemError, "DeepComm: cannot restrict UCX to " + devices + ": " + api.status_string(s));
  DC_INFO("ucx: UCX_NET_DEVICES=%s", devices.c_str());
}

}  // namespace dc
