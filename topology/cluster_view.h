// The cluster view: one immutable description of where a communicator's ranks are — which host
// each rank is on, which ranks share a host, how ranks of one host exchange bytes, and the link
// tiers the cost model prices (between ranks of one host, between hosts). Every rank builds the same
// view from agreed data (the host identities on the bootstrap cards and the agreed settings);
// split and shrink children derive theirs from the parent's. The planner reads topology only
// through it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dc {

// One level of links: α (seconds per message) and the bandwidth of one link of that tier. Between
// hosts the link is the host's own (its ranks share it); inside a host it is one rank's stream.
struct LinkTier {
  std::string name;
  double latency_s = 0;
  double bandwidth_Bps = 0;
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

class ClusterView {
 public:
  // host_ids[r]: the host identity of comm rank r. Hosts are numbered in order of their first rank.
  // shared_memory: ranks of one host exchange bytes through shared memory (else through sockets).
  static std::shared_ptr<const ClusterView> from_hosts(const std::vector<std::string>& host_ids,
                                                       bool shared_memory);
  // Every rank on one host.
  static std::shared_ptr<const ClusterView> one_host(int nranks, bool shared_memory);
  // hosts x ranks_per_host in block placement (ranks 0..R-1 on host 0, ...).
  static std::shared_ptr<const ClusterView> blocks(int hosts, int ranks_per_host, bool shared_memory);
  // The view of a child communicator whose rank i is this view's rank members[i].
  std::shared_ptr<const ClusterView> subset(const std::vector<int>& members) const;

  int nranks() const { return static_cast<int>(host_of_.size()); }
  int nhosts() const { return static_cast<int>(hosts_.size()); }
  int host_of(int rank) const { return host_of_[rank]; }
  const std::vector<int>& ranks_on_host(int host) const { return hosts_[host]; }
  // Position of rank among its host's ranks (its local rank).
  int local_index(int rank) const { return local_index_[rank]; }
  int max_ranks_per_host() const;
  bool same_host(int a, int b) const { return host_of_[a] == host_of_[b]; }
  // Every member on one host, exchanging bytes through shared memory.
  bool shares_memory(const std::vector<int>& members) const;
  bool shared_memory() const { return shared_memory_; }

  // The tier of the link between two ranks, and the memory bandwidth of a host.
  const LinkTier& tier_between(int a, int b) const { return same_host(a, b) ? intra_host_ : inter_host_; }
  const LinkTier& intra_host() const { return intra_host_; }
  const LinkTier& inter_host() const { return inter_host_; }
  double memory_bandwidth() const { return memory_bandwidth_; }
  // What one rank's thread moves through memory per second (copies, sums).
  double rank_memory_bandwidth() const { return rank_memory_bandwidth_; }

  // A stable digest of everything above (cache keys, agreement, JSON).
  uint64_t hash() const;
  std::string describe() const;

 private:
  ClusterView(std::vector<int> host_of, bool shared_memory);

  std::vector<int> host_of_;
  std::vector<std::vector<int>> hosts_;
  std::vector<int> local_index_;
  bool shared_memory_ = true;
  LinkTier intra_host_;
  LinkTier inter_host_;
  double memory_bandwidth_ = 0;
  double rank_memory_bandwidth_ = 0;
};

}  // namespace dc
