#include "topology/cluster_view.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "base/error.h"

namespace dc {

LinkTier default_shared_memory_tier() { return {"shm", 20e-6, 0, false}; }
LinkTier default_loopback_tier() { return {"loopback", 30e-6, 1.5e9, false}; }
LinkTier default_network_tier() { return {"network", 50e-6, 1.25e9, false}; }
double default_memory_bandwidth() { return 16e9; }
double default_rank_memory_bandwidth() { return 10e9; }
double default_message_cpu_seconds() { return 20e-6; }

LinkTier link_tier_of(const topo::Tier& tier) {
  LinkTier t{tier.name, tier.latency_us * 1e-6, tier.bandwidth_gbps * 1e9 / 8, tier.per_rail};
  if (tier.calibration) {
    t.latency_s = tier.calibration->alpha_us * 1e-6;
    t.bandwidth_Bps = 1e9 / tier.calibration->beta_ns_per_byte;
  }
  return t;
}

void ClusterView::place_ranks() {
  int hosts = 0;
  for (int h : host_of_) hosts = std::max(hosts, h + 1);
  hosts_.assign(hosts, Host{});
  local_index_.resize(host_of_.size());
  for (size_t r = 0; r < host_of_.size(); ++r) {
    Host& host = hosts_[host_of_[r]];
    local_index_[r] = static_cast<int>(host.ranks.size());
    host.ranks.push_back(static_cast<int>(r));
  }
}

void ClusterView::finish() {
  // Fast groups: the innermost tier's groups when a slower tier follows it.
  groups_.clear();
  std::map<int, int> renumbered;  // tier-0 group -> fast group
  for (int h = 0; h < nhosts(); ++h) {
    Host& host = hosts_[h];
    const int tier0 = network_.size() >= 2 ? host.tier_group[0] : 0;
    if (tier0 < 0) {
      host.group = ngroups();
      groups_.push_back({});
    } else {
      auto it = renumbered.emplace(tier0, ngroups()).first;
      if (it->second == ngroups()) groups_.push_back({});
      host.group = it->second;
    }
    groups_[host.group].push_back(h);
  }
  // FNV-1a over the serialization: the same view gives the same digest in every process.
  uint64_t digest = 0xcbf29ce484222325ull;
  for (unsigned char ch : serialize()) {
    digest ^= ch;
    digest *= 0x100000001b3ull;
  }
  hash_ = digest;
}

std::shared_ptr<const ClusterView> ClusterView::from_hosts(const std::vector<std::string>& host_ids,
                                                           bool shared_memory) {
  ClusterInputs inputs;
  inputs.host_ids = host_ids;
  inputs.shared_memory = shared_memory;
  return build(inputs);
}

std::shared_ptr<const ClusterView> ClusterView::one_host(int nranks, bool shared_memory) {
  if (nranks < 1) fail(dcInvalidArgument, "cluster view: no ranks");
  return layout({nranks}, shared_memory);
}

std::shared_ptr<const ClusterView> ClusterView::blocks(int hosts, int ranks_per_host, bool shared_memory,
                                                       const topo::TopologyFile* file) {
  if (hosts < 1 || ranks_per_host < 1) fail(dcInvalidArgument, "cluster view: no ranks");
  return layout(std::vector<int>(hosts, ranks_per_host), shared_memory, file);
}

std::shared_ptr<const ClusterView> ClusterView::layout(const std::vector<int>& ranks_per_host, bool shared_memory,
                                                       const topo::TopologyFile* file) {
  ClusterInputs inputs;
  for (size_t h = 0; h < ranks_per_host.size(); ++h) {
    if (ranks_per_host[h] < 1) fail(dcInvalidArgument, "cluster view: a host without ranks");
    inputs.host_ids.insert(inputs.host_ids.end(), ranks_per_host[h], "host" + std::to_string(h));
  }
  inputs.file = file;
  inputs.shared_memory = shared_memory;
  return build(inputs);
}

std::shared_ptr<const ClusterView> ClusterView::subset(const std::vector<int>& members) const {
  if (members.empty()) fail(dcInvalidArgument, "cluster view: no ranks");
  // Renumber the hosts in order of their first member, as build would.
  std::map<int, int> renumbered;
  auto child = std::shared_ptr<ClusterView>(new ClusterView());
  std::vector<int> parent_host;
  for (int m : members) {
    if (m < 0 || m >= nranks()) fail(dcInvalidArgument, "cluster view: member outside the view");
    auto [it, fresh] = renumbered.emplace(host_of_[m], static_cast<int>(renumbered.size()));
    if (fresh) parent_host.push_back(host_of_[m]);
    child->host_of_.push_back(it->second);
  }
  child->place_ranks();
  for (size_t h = 0; h < parent_host.size(); ++h) {
    const Host& from = hosts_[parent_host[h]];
    Host& into = child->hosts_[h];
    into.node = from.node;
    into.rails = from.rails;
    into.tier_group = from.tier_group;
  }
  child->shared_memory_ = shared_memory_;
  child->receives_in_place_ = receives_in_place_;
  child->intra_host_ = intra_host_;
  child->network_ = network_;
  child->tuning_ = tuning_;
  child->memory_bandwidth_ = memory_bandwidth_;
  child->rank_memory_bandwidth_ = rank_memory_bandwidth_;
  child->finish();
  return child;
}

int ClusterView::max_ranks_per_host() const {
  size_t most = 0;
  for (const Host& h : hosts_) most = std::max(most, h.ranks.size());
  return static_cast<int>(most);
}

bool ClusterView::shares_memory(const std::vector<int>& members) const {
  if (!shared_memory_) return false;
  for (int m : members)
    if (host_of_[m] != host_of_[members.front()]) return false;
  return true;
}

int ClusterView::tier_index(int host_a, int host_b) const {
  const Host& a = hosts_[host_a];
  const Host& b = hosts_[host_b];
  for (int t = 0; t + 1 < network_tiers(); ++t)
    if (a.tier_group[t] >= 0 && a.tier_group[t] == b.tier_group[t]) return t;
  return network_tiers() - 1;  // the last tier joins every host
}

const LinkTier& ClusterView::tier_between(int a, int b) const {
  if (same_host(a, b)) return intra_host_;
  return network_[tier_index(host_of_[a], host_of_[b])];
}

const ClusterView::Reach& ClusterView::reach(int host) const {
  std::call_once(reach_once_, [this] {
    reach_.assign(nhosts(), Reach{std::vector<int>(network_.size(), 0), std::vector<int>(network_.size(), 0)});
    for (int a = 0; a < nhosts(); ++a) {
      for (int b = a + 1; b < nhosts(); ++b) {
        const int t = tier_index(a, b);
        ++reach_[a].hosts[t];
        ++reach_[b].hosts[t];
        reach_[a].ranks[t] += static_cast<int>(hosts_[b].ranks.size());
        reach_[b].ranks[t] += static_cast<int>(hosts_[a].ranks.size());
      }
    }
  });
  return reach_[host];
}

std::vector<int> ClusterView::topology_order(const std::vector<int>& members) const {
  std::vector<int> ordered = members;
  std::stable_sort(ordered.begin(), ordered.end(), [&](int a, int b) {
    const int ha = host_of_[a], hb = host_of_[b];
    if (hosts_[ha].group != hosts_[hb].group) return hosts_[ha].group < hosts_[hb].group;
    if (ha != hb) return ha < hb;
    return local_index_[a] < local_index_[b];
  });
  return ordered;
}

namespace {

std::string tier_text(const LinkTier& t) {
  std::ostringstream out;
  out << t.name << " (" << t.latency_s * 1e6 << " us, " << t.bandwidth_Bps / 1e9 << " GB/s"
      << (t.per_rail ? " per rail" : "") << ")";
  return out.str();
}

}  // namespace

std::string ClusterView::serialize() const {
  std::ostringstream out;
  out << "shm=" << shared_memory_ << ";in_place=" << receives_in_place_ << ";intra=" << tier_text(intra_host_)
      << ";mem=" << memory_bandwidth_ << ',' << rank_memory_bandwidth_;
  for (const LinkTier& t : network_) out << ";tier=" << tier_text(t);
  for (const Host& h : hosts_) {
    out << ";host=" << h.node.host << ",rails=" << h.rails << ",groups=";
    for (int g : h.tier_group) out << g << ',';
    out << "ranks=";
    for (int r : h.ranks) out << r << ',';
  }
  for (const topo::TuningRule& t : tuning_)
    out << ";tune=" << t.collective << ',' << t.algorithm << ',' << t.min_bytes << ',' << t.max_bytes << ',' << t.hosts
        << ',' << t.ranks;
  return out.str();
}

std::string ClusterView::describe() const {
  constexpr int kListed = 16;
  std::ostringstream out;
  out << nhosts() << " host(s), " << nranks() << " rank(s):";
  for (int h = 0; h < std::min(nhosts(), kListed); ++h) {
    out << " [";
    for (size_t i = 0; i < hosts_[h].ranks.size(); ++i) out << (i ? "," : "") << hosts_[h].ranks[i];
    out << "]";
  }
  if (nhosts() > kListed) out << " ... (" << nhosts() - kListed << " more hosts)";
  int fewest = hosts_[0].rails, most = fewest;
  for (const Host& h : hosts_) {
    fewest = std::min(fewest, h.rails);
    most = std::max(most, h.rails);
  }
  out << "; rails per host " << fewest;
  if (most != fewest) out << "-" << most;
  out << "; " << ngroups() << " fast group(s)";
  if (ngroups() > 1 && ngroups() < nhosts()) {
    out << " of " << groups_[0].size();
    if (ngroups() > 1 && groups_.back().size() != groups_[0].size()) out << "-" << groups_.back().size();
    out << " host(s)";
  }
  out << "; inside a host " << tier_text(intra_host_) << "; between hosts";
  for (size_t t = 0; t < network_.size(); ++t) out << (t ? ", then " : " ") << tier_text(network_[t]);
  out << "; memory " << memory_bandwidth_ / 1e9 << " GB/s per host, " << rank_memory_bandwidth_ / 1e9
      << " GB/s per rank";
  if (!tuning_.empty()) out << "; " << tuning_.size() << " tuning rule(s)";
  return out.str();
}

}  // namespace dc
