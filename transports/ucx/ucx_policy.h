// What DeepComm sets in UCX before its first init, each only where the user has not set the
// variable (docs/configuration.md, "UCX"):
//  - UCX_NET_DEVICES: the interface DeepComm's TCP transport selects (NCCL_SOCKET_IFNAME rules)
//    plus every RDMA port, so UCX's unauthenticated TCP transport listens only there;
//  - memory hooks: no malloc hooks, malloc relocations or dynamic mmap threshold (UCX would swap
//    glibc's allocator behaviour under a program such as PyTorch); memory events (relocation hooks
//    of mmap/munmap/...) stay on, since UCX's registration cache invalidates through them.
//  - which connections move ordinary memory in place (DEEPCOMM_UCX_IN_PLACE, below).
#pragma once

#include <string>

#include "transports/ucx/ucx_api.h"

namespace dc {

// "eth0" or "eth0,mlx5_0:1,...": the selected interface and the RDMA ports found in sysfs.
std::string ucx_net_devices();

// Applies the memory-hook policy to UCM's global options (before ucp_init).
void apply_memory_hook_policy(const UcxApi& api);

// Whether a connection sends ordinary memory from, and receives it into, the caller's buffer
// (through the registration cache) rather than through staging. DEEPCOMM_UCX_IN_PLACE=auto (the
// default) says yes where UCX's rendezvous is pulled by the receiver: cross-memory attach on one
// host, RDMA between hosts. There a failed call's receive ends within the cancel wait, since the
// transfer needs nothing of the sender's CPU. Over UCX's tcp transport the sender pushes the
// payload into the receiver's addresses, and a sender stalled mid-message would write into a
// failed receive's buffer after the call returned (docs/architecture.md, "cancel"): staged.
// `always` takes that risk as Open MPI does; `never` stages everywhere.
bool ucx_moves_in_place(bool same_host);

// Applies the device restriction to a UCP configuration read from the environment.
void restrict_devices(const UcxApi& api, ucp_config_t* config);

}  // namespace dc
