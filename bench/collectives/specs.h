// The benchmarks' collectives, with nccl-tests' size conventions and bus-bandwidth factors.
#pragma once

#include "bench/collectives/perf_driver.h"

namespace dcbench {

extern const CollectiveSpec kAllReduce, kAllGather, kBroadcast, kReduce, kReduceScatter, kAlltoAll, kSendRecv, kGather,
    kScatter;

}  // namespace dcbench
