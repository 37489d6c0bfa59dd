// The cost model. A plan's time is its latency — α of the link tier for each message on its
// critical path — plus the busiest resource's bytes over that resource's rate: each host's links
// of each network tier (its ranks share one link, or with a per-rail tier each rail is a link;
// per direction), each socket stream inside a host, each rank's memory traffic (γ: bytes a rank's
// copies and sums move through memory), each host's memory traffic in all, and on a host with
// fewer cores than ranks its cores (every message costs its sender's and its receiver's engine
// CPU time, default_message_cpu_seconds each). Tiers and rates come from the cluster view. Phases
// of a composed plan pipeline: their latencies add, and so do their loads on each resource.
//
// Loads are kept as a list of (resource, bytes) and summed per resource only when priced, so a
// generator's traffic costs what it touches: the same model prices 8 ranks and 32768.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "src/plan/plan.h"

namespace dc {

class Traffic {
 public:
  explicit Traffic(const ClusterView& view) : view_(&view) {}

  // `count` messages one after another, over the tier between ranks a and b.
  void hops(int count, int a, int b);
  void hops(double count, double latency_s);
  // Time a pipelined chunk spends crossing a chain of edges one after another, beyond what the
  // busiest link's load already counts (tree_shape.h). Kept apart from the α so that the α can be
  // held against the materialized plans', which do not see it.
  void pipeline_fill(double seconds);
  // `messages` messages of `bytes` in all from rank `from` to rank `to`; the receiver copies them
  // in (reduce: and combines them with its own data while each piece is in cache).
  void transfer(int from, int to, double bytes, bool reduce = false, double messages = 1);
  // `count` message ends (a send or a receive each) on a host's engines, for traffic priced by
  // link (rank_link, host_link) rather than by transfer.
  void message_ends(int host, double count);
  // `out` bytes leaving and `in` bytes arriving at a rank over network tier `tier`, on its rail;
  // and the same for a host, spread evenly over its links of the tier.
  void rank_link(int rank, int tier, double out, double in);
  void host_link(int host, int tier, double out, double in);
  // Bytes a rank moves through memory on its own (reads plus writes).
  void memory(int rank, double bytes);
  // A later phase of the same plan (pipelined: latencies add, loads add).
  void add(const Traffic& phase);
  // Work that runs at the same time on other ranks (another host, another rail): loads add, the
  // latency is the longer one.
  void add_alongside(const Traffic& other);
  // `times` copies of this traffic that pipeline with one another (the rounds of a hierarchical
  // all-reduce): every load, message ends included, multiplies; the latency stays one copy's.
  void repeat(int times);

  double seconds() const;
  double latency_seconds() const { return latency_; }
  double fill_seconds() const { return fill_; }
  // The busiest network link's bytes over its rate.
  double network_seconds() const;

  // Bytes on each network link: (tier, host, rail, outgoing) -> bytes. Tests compare these.
  using Link = std::tuple<int, int, int, bool>;
  std::map<Link, double> link_bytes() const;
  // Message ends (sends plus receives) per host. Tests compare these.
  std::map<int, double> host_message_ends() const;

 private:
  enum Kind : uint64_t { kNetOut = 0, kNetIn = 1, kStream = 2, kMemory = 3, kCpu = 4 };
  struct Load {
    uint64_t key;   // kind:3 | tier:5 (topo::kMaxTiers) | host:24 | rail or rank:32
    double amount;  // bytes; message ends for kCpu
  };
  static Kind kind_of(uint64_t key) { return static_cast<Kind>(key >> 61); }
  static int tier_of(uint64_t key) { return static_cast<int>((key >> 56) & 0x1f); }
  static int host_of(uint64_t key) { return static_cast<int>((key >> 32) & 0xffffff); }
  static uint64_t key(Kind kind, int tier, int host, int index);
  void network(int tier, int host, int rail, bool out, double bytes);
  // Sums the loads per resource, in key order.
  std::vector<Load> totals() const;
  double load_seconds(const std::vector<Load>& totals, bool network_only) const;

  const ClusterView* view_;
  double latency_ = 0;
  double fill_ = 0;
  std::vector<Load> loads_;
};

// Time of the plan's longest dependency path, each step priced by the tier it crosses: a transfer
// costs α + bytes / bandwidth of its tier (shared memory: bytes through memory), a local step its
// bytes through memory. Prices grouped operations (dcGroupSimulateEnd).
double plan_time_seconds(const Plan& plan, const PlanRequest& request);

// The traffic of materialized plans (every rank's plan of one operation): each message's bytes on
// the links it crosses, and as latency the longest chain of messages through the plans'
// dependencies (and each message's wait for its sender), each message costing α of its tier.
// Checks the generators' analytical traffic on small clusters; the simulator uses the analytical
// one at scale.
Traffic materialized_traffic(const std::vector<Plan>& plans, const PlanRequest& request);

}  // namespace dc
