// The cost model. A plan's time is its latency — α of the slowest link tier for each message on its
// critical path — plus the busiest resource's bytes over that resource's rate: each host's network
// link (its ranks share it, per direction), each socket stream inside a host, each rank's memory
// traffic (γ: bytes a rank's copies and sums move through memory) and each host's memory traffic
// in all. Tiers and rates come from the cluster view. Phases of a composed plan pipeline: their
// latencies add, and so do their loads on each resource.
#pragma once

#include <cstddef>
#include <vector>

#include "src/plan/plan.h"

namespace dc {

class Traffic {
 public:
  explicit Traffic(const ClusterView& view);

  // `count` messages one after another, over the tier between ranks a and b.
  void hops(int count, int a, int b);
  void hops(int count, double latency_s);
  // One message of `bytes` from rank `from` to rank `to`; the receiver copies it in (reduce: and
  // combines it with its own data while each piece is in cache).
  void transfer(int from, int to, double bytes, bool reduce = false);
  // Bytes a rank moves through memory on its own (reads plus writes).
  void memory(int rank, double bytes);
  // A later phase of the same plan (pipelined: latencies add, loads add).
  void add(const Traffic& phase);
  // Work that runs at the same time on other ranks (another host, another rail): loads add, the
  // latency is the longer one.
  void add_alongside(const Traffic& other);

  double seconds() const;

 private:
  void add_loads(const Traffic& other);

  const ClusterView* view_;
  double latency_ = 0;
  std::vector<double> network_out_, network_in_;  // per host
  std::vector<double> stream_;                    // per rank: bytes it sends over sockets in its host
  std::vector<double> memory_;                    // per rank
};

// Time of the plan's longest dependency path, each step priced by the tier it crosses: a transfer
// costs α + bytes / bandwidth of its tier (shared memory: bytes through memory), a local step its
// bytes through memory. Prices grouped operations (dcGroupSimulateEnd).
double plan_time_seconds(const Plan& plan, const PlanRequest& request);

}  // namespace dc
