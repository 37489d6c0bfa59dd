// The cluster view: one immutable description of where a communicator's ranks are — which host
// each rank is on, which ranks share a host, each host's node summary and rails, the network tiers
// between hosts and the fast groups they form — and the links the cost model prices. Every rank
// builds the same view from agreed data (the host identities and node summaries on the bootstrap
// cards, the topology file whose digest all ranks agreed on, the agreed settings); split and
// shrink children derive theirs from the parent's. The planner reads topology only through it.
//
// Levels, innermost first: ranks of one host (shared memory, or sockets over loopback); hosts of
// one fast group (the innermost network tier's groups, e.g. an InfiniBand island); the slow links
// between fast groups (the tiers after it). With one network tier every host is in one group.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "topology/node_summary.h"
#include "topology/topology_file.h"

namespace dc {

// One level of links: α (seconds per message) and the bandwidth of one link, one direction.
// Inside a host the link is one rank's stream; between hosts it is the host's link, shared by its
// ranks, or with per_rail one link per rail (local rank i uses rail i mod the host's rails).
struct LinkTier {
  std::string name;
  double latency_s = 0;
  double bandwidth_Bps = 0;
  bool per_rail = false;
};

// Default tiers, until a topology file or a calibration says otherwise. Measured on the 2-core
// development machine: a hand-off through the progress engine costs ~20 µs; one TCP stream over
// loopback moves ~1.5 GB/s; one thread moves ~10 GB/s through memory (reads + writes of copies and
// sums) and the whole host ~16 GB/s. Between hosts we assume 10 Gbit/s Ethernet.
LinkTier default_shared_memory_tier();
LinkTier default_loopback_tier();
LinkTier default_network_tier();
double default_memory_bandwidth();
double default_rank_memory_bandwidth();
// CPU time one end of a message costs (the sender's or the receiver's engine: a system call, a
// wake-up, the bookkeeping). Priced only on hosts with fewer cores than ranks, where the ranks
// queue for the cores; with a core per rank it is part of α on the message's chain. Fitted on the
// namespace cluster (8 ranks on 2 cores): ring, hierarchical and tree all-reduces of 64 B cost
// ~20 µs of time per extra message end per core (docs/topology.md).
double default_message_cpu_seconds();

// A topology file's tier as the cost model prices it: calibrated α and β where given, else the
// declared latency and bandwidth.
LinkTier link_tier_of(const topo::Tier& tier);

// What a view is built from: every rank's host identity and detected node (the bootstrap cards),
// and the topology file all ranks agreed on.
struct ClusterInputs {
  std::vector<std::string> host_ids;     // per rank
  std::vector<topo::NodeSummary> nodes;  // per rank, as detected; empty: a simulated cluster
  const topo::TopologyFile* file = nullptr;
  bool shared_memory = true;  // ranks of one host exchange bytes through shared memory
  // Ranks of one host that do not share memory receive large messages straight into the
  // destination buffer, not through staging (UCX in place: by default where cross-memory attach
  // lets the receiver pull each payload in one copy).
  bool receives_in_place = false;
};

class ClusterView {
 public:
  // Hosts are numbered in order of their first rank. A host's node is its first rank's summary
  // with the file's entry for it applied; in a simulated cluster (no nodes) it is the file's entry
  // itself (a dump describes a whole cluster). Throws dc::Error (dcInvalidArgument) naming the
  // file and line when the file does not fit the cluster (a host in two groups of one tier, an
  // entry naming a NIC a host lacks).
  static std::shared_ptr<const ClusterView> build(const ClusterInputs& inputs);
  // Host identities alone, default tiers.
  static std::shared_ptr<const ClusterView> from_hosts(const std::vector<std::string>& host_ids, bool shared_memory);
  // Every rank on one host.
  static std::shared_ptr<const ClusterView> one_host(int nranks, bool shared_memory);
  // hosts x ranks_per_host in block placement (ranks 0..R-1 on host 0, ...).
  static std::shared_ptr<const ClusterView> blocks(int hosts, int ranks_per_host, bool shared_memory,
                                                   const topo::TopologyFile* file = nullptr);
  // A simulated cluster in block placement with ranks_per_host[h] ranks on host h.
  static std::shared_ptr<const ClusterView> layout(const std::vector<int>& ranks_per_host, bool shared_memory,
                                                   const topo::TopologyFile* file = nullptr);
  // The view of a child communicator whose rank i is this view's rank members[i].
  std::shared_ptr<const ClusterView> subset(const std::vector<int>& members) const;

  int nranks() const { return static_cast<int>(host_of_.size()); }
  int nhosts() const { return static_cast<int>(hosts_.size()); }
  int host_of(int rank) const { return host_of_[rank]; }
  const std::vector<int>& ranks_on_host(int host) const { return hosts_[host].ranks; }
  // Position of rank among its host's ranks (its local rank).
  int local_index(int rank) const { return local_index_[rank]; }
  int max_ranks_per_host() const;
  bool same_host(int a, int b) const { return host_of_[a] == host_of_[b]; }
  // Every member on one host, exchanging bytes through shared memory.
  bool shares_memory(const std::vector<int>& members) const;
  bool shared_memory() const { return shared_memory_; }
  // ClusterInputs::receives_in_place (never where ranks share memory).
  bool receives_in_place() const { return receives_in_place_; }

  const std::string& host_name(int host) const { return hosts_[host].node.host; }
  const topo::NodeSummary& node(int host) const { return hosts_[host].node; }
  // The host's rails (NICs with a rail number), at least 1: the links of a per-rail tier.
  int rails(int host) const { return hosts_[host].rails; }
  // The rail a rank's traffic between hosts takes: its local index modulo the host's rails.
  int rail_of(int rank) const { return local_index_[rank] % hosts_[host_of_[rank]].rails; }

  // Tiers: inside a host, and the network tiers between hosts, innermost first.
  const LinkTier& intra_host() const { return intra_host_; }
  int network_tiers() const { return static_cast<int>(network_.size()); }
  const LinkTier& network_tier(int t) const { return network_[t]; }
  // The network tier two different hosts talk over: the first whose groups hold both.
  int tier_index(int host_a, int host_b) const;
  // The host's group in a network tier (-1: the tier does not join it; 0 in a tier without groups).
  int tier_group(int host, int tier) const { return hosts_[host].tier_group[tier]; }
  // The tier of the link between two ranks.
  const LinkTier& tier_between(int a, int b) const;

  // Per network tier: how many other hosts, and ranks on them, a host talks to over that tier
  // (for pricing traffic between every pair of hosts without naming each pair; computed for all
  // hosts at the first call).
  struct Reach {
    std::vector<int> hosts;
    std::vector<int> ranks;
  };
  const Reach& reach(int host) const;

  // Fast groups (groups of the innermost network tier when there are two tiers or more; hosts
  // it leaves out form groups of their own), numbered in order of their first host.
  int ngroups() const { return static_cast<int>(groups_.size()); }
  int group_of(int host) const { return hosts_[host].group; }
  const std::vector<int>& hosts_in_group(int group) const { return groups_[group]; }
  // members ordered by (fast group, host, local index): a ring in this order crosses the link
  // between two hosts, and each slow link between groups, as few times as possible.
  std::vector<int> topology_order(const std::vector<int>& members) const;

  // The topology file's measured algorithm choices (the selector reads them: src/plan/tuning.h).
  const std::vector<topo::TuningRule>& tuning() const { return tuning_; }

  double memory_bandwidth() const { return memory_bandwidth_; }
  // What one rank's thread moves through memory per second (copies, sums).
  double rank_memory_bandwidth() const { return rank_memory_bandwidth_; }

  // A stable digest of everything above (cache keys, JSON), computed once.
  uint64_t hash() const { return hash_; }
  // One paragraph: hosts with their ranks (the first 16 hosts), rails, groups and tiers.
  std::string describe() const;

 private:
  struct Host {
    std::vector<int> ranks;
    topo::NodeSummary node;
    int rails = 1;
    std::vector<int> tier_group;  // per network tier: the host's group there, -1 when none
    int group = 0;                // fast group
  };

  ClusterView() = default;
  // Fills hosts_ and local_index_ from host_of_, with empty nodes and one rail each.
  void place_ranks();
  // Fast groups from the hosts' tier groups, then the digest.
  void finish();
  std::string serialize() const;

  std::vector<int> host_of_;
  std::vector<Host> hosts_;
  std::vector<int> local_index_;
  std::vector<std::vector<int>> groups_;
  bool shared_memory_ = true;
  bool receives_in_place_ = false;
  LinkTier intra_host_;
  std::vector<LinkTier> network_;
  std::vector<topo::TuningRule> tuning_;
  double memory_bandwidth_ = 0;
  double rank_memory_bandwidth_ = 0;
  uint64_t hash_ = 0;
  mutable std::once_flag reach_once_;
  mutable std::vector<Reach> reach_;
};

namespace topo {
// The view as a topology file: its network tiers as the model prices them (groups as host
// indices) and one entry per host with its node — by host name where the names are distinct,
// else by index — so that loading it gives the same tiers, groups and rails
// (DEEPCOMM_TOPO_DUMP_FILE, deepcomm-topo).
TopologyFile topology_file_of(const ClusterView& view);
}  // namespace topo

}  // namespace dc
