#include "bench/collectives/specs.h"

namespace dcbench {

namespace {

// Same count on both sides (all-reduce, broadcast, reduce, send/recv).
void same_counts(size_t size, size_t es, int, size_t* send, size_t* recv, size_t* count) {
  *count = size / es;
  *send = *recv = *count;
}
// The size is the gathered total; each rank contributes size/n (all-gather, gather).
void gathered_counts(size_t size, size_t es, int n, size_t* send, size_t* recv, size_t* count) {
  *count = size / es / n;
  *send = *count;
  *recv = *count * n;
}
// The size is the scattered total; each rank keeps size/n (reduce-scatter, scatter).
void scattered_counts(size_t size, size_t es, int n, size_t* send, size_t* recv, size_t* count) {
  *count = size / es / n;
  *send = *count * n;
  *recv = *count;
}
void alltoall_counts(size_t size, size_t es, int n, size_t* send, size_t* recv, size_t* count) {
  *count = size / es / n;
  *send = *recv = *count * n;
}

double allreduce_factor(int n) { return 2.0 * (n - 1) / n; }
double spread_factor(int n) { return static_cast<double>(n - 1) / n; }
double unit_factor(int) { return 1.0; }

}  // namespace

const CollectiveSpec kAllReduce{"all_reduce", dcCollAllReduce, true, false, same_counts, allreduce_factor};
const CollectiveSpec kAllGather{"all_gather", dcCollAllGather, false, false, gathered_counts, spread_factor};
const CollectiveSpec kBroadcast{"broadcast", dcCollBroadcast, false, true, same_counts, unit_factor};
const CollectiveSpec kReduce{"reduce", dcCollReduce, true, true, same_counts, unit_factor};
const CollectiveSpec kReduceScatter{"reduce_scatter", dcCollReduceScatter, true, false,
                                    scattered_counts, spread_factor};
const CollectiveSpec kAlltoAll{"alltoall", dcCollAlltoAll, false, false, alltoall_counts, spread_factor};
const CollectiveSpec kSendRecv{"sendrecv", dcCollSend, false, false, same_counts, unit_factor};
const CollectiveSpec kGather{"gather", dcCollGather, false, true, gathered_counts, spread_factor};
const CollectiveSpec kScatter{"scatter", dcCollScatter, false, true, scattered_counts, spread_factor};

}  // namespace dcbench
