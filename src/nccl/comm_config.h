// ncclConfig_t of any NCCL version -> dcConfig_t, with NCCL's rules.
#pragma once

#include "deepcomm/deepcomm.h"
#include "deepcomm/nccl.h"

namespace dc::nccl {

// Options of a communicator made without a config (ncclCommInitRank): NCCL's defaults, with
// NCCL_COMM_BLOCKING (0 or 1) choosing the blocking mode.
dcConfig_t default_comm_config();

// NCCL's rules: the magic must be 0xcafebeef (else dcInvalidArgument); only the fields that fit in
// config->size are read (a 2.28 config ends after nvlinkCentricSched, and configs older than 2.14
// carry fields up to `blocking` only); fields left at NCCL_CONFIG_UNDEF_* keep the defaults.
// numRmaCtx (2.30, default 1) must not be negative and sets the one-sided contexts. Options about GPUs, graphs and networks (CTAs, CGA
// clusters, NVLS, collnet, netName, trafficClass, split/shrink sharing, graphUsageMode,
// graphStreamOrdering, maxP2pPeers) have no meaning on host memory and are accepted and ignored.
// The returned config borrows config->commName.
dcConfig_t comm_config_from_nccl(const ncclConfig_t& config);

}  // namespace dc::nccl
