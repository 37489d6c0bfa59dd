// What DeepComm sets in UCX before its first init, each only where the user has not set the
// variable (docs/configuration.md, "UCX"):
//  - UCX_NET_DEVICES: the interface DeepComm's TCP transport selects (NCCL_SOCKET_IFNAME rules)
//    plus every RDMA port, so UCX's unauthenticated TCP transport listens only there;
//  - memory hooks: no malloc hooks, malloc relocations or dynamic mmap threshold (UCX would swap
//    glibc's allocator behaviour under a program such as PyTorch); memory events (relocation hooks
//    of mmap/munmap/...) stay on, since UCX's registration cache invalidates through them.
#pragma once

#include <string>

#include "transports/ucx/ucx_api.h"

namespace dc {

// "eth0" or "eth0,mlx5_0:1,...": the selected interface and the RDMA ports found in sysfs.
std::string ucx_net_devices();

// Applies the memory-hook policy to UCM's global options (before ucp_init).
void apply_memory_hook_policy(const UcxApi& api);

// Applies the device restriction to a UCP configuration read from the environment.
void restrict_devices(const UcxApi& api, ucp_config_t* config);

}  // namespace dc
