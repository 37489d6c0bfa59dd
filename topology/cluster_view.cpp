#include "topology/cluster_view.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "src/base/error.h"

namespace dc {

LinkTier default_shared_memory_tier() { return {"shm", 20e-6, 0}; }
LinkTier default_loopback_tier() { return {"loopback", 30e-6, 1.5e9}; }
LinkTier default_network_tier() { return {"network", 50e-6, 1.25e9}; }
double default_memory_bandwidth() { return 16e9; }
double default_rank_memory_bandwidth() { return 10e9; }

ClusterView::ClusterView(std::vector<int> host_of, bool shared_memory)
    : host_of_(std::move(host_of)),
      shared_memory_(shared_memory),
      intra_host_(shared_memory ? default_shared_memory_tier() : default_loopback_tier()),
      inter_host_(default_network_tier()),
      memory_bandwidth_(default_memory_bandwidth()),
      rank_memory_bandwidth_(default_rank_memory_bandwidth()) {
  int hosts = 0;
  for (int h : host_of_) hosts = std::max(hosts, h + 1);
  hosts_.resize(hosts);
  local_index_.resize(host_of_.size());
  for (size_t r = 0; r < host_of_.size(); ++r) {
    local_index_[r] = static_cast<int>(hosts_[host_of_[r]].size());
    hosts_[host_of_[r]].push_back(static_cast<int>(r));
  }
}

std::shared_ptr<const ClusterView> ClusterView::from_hosts(const std::vector<std::string>& host_ids,
                                                           bool shared_memory) {
  if (host_ids.empty()) fail(dcInvalidArgument, "cluster view: no ranks");
  std::map<std::string, int> index;
  std::vector<int> host_of;
  for (const std::string& id : host_ids) {
    auto it = index.emplace(id, static_cast<int>(index.size())).first;
    host_of.push_back(it->second);
  }
  return std::shared_ptr<const ClusterView>(new ClusterView(std::move(host_of), shared_memory));
}

std::shared_ptr<const ClusterView> ClusterView::one_host(int nranks, bool shared_memory) {
  if (nranks < 1) fail(dcInvalidArgument, "cluster view: no ranks");
  return std::shared_ptr<const ClusterView>(new ClusterView(std::vector<int>(nranks, 0), shared_memory));
}

std::shared_ptr<const ClusterView> ClusterView::blocks(int hosts, int ranks_per_host, bool shared_memory) {
  if (hosts < 1 || ranks_per_host < 1) fail(dcInvalidArgument, "cluster view: no ranks");
  std::vector<int> host_of;
  for (int h = 0; h < hosts; ++h) host_of.insert(host_of.end(), ranks_per_host, h);
  return std::shared_ptr<const ClusterView>(new ClusterView(std::move(host_of), shared_memory));
}

std::shared_ptr<const ClusterView> ClusterView::subset(const std::vector<int>& members) const {
  if (members.empty()) fail(dcInvalidArgument, "cluster view: no ranks");
  // Renumber the hosts in order of their first member, as from_hosts would.
  std::map<int, int> renumbered;
  std::vector<int> host_of;
  for (int m : members) {
    if (m < 0 || m >= nranks()) fail(dcInvalidArgument, "cluster view: member outside the view");
    auto it = renumbered.emplace(host_of_[m], static_cast<int>(renumbered.size())).first;
    host_of.push_back(it->second);
  }
  auto child = std::shared_ptr<ClusterView>(new ClusterView(std::move(host_of), shared_memory_));
  child->intra_host_ = intra_host_;
  child->inter_host_ = inter_host_;
  child->memory_bandwidth_ = memory_bandwidth_;
  child->rank_memory_bandwidth_ = rank_memory_bandwidth_;
  return child;
}

int ClusterView::max_ranks_per_host() const {
  size_t most = 0;
  for (const auto& h : hosts_) most = std::max(most, h.size());
  return static_cast<int>(most);
}

bool ClusterView::shares_memory(const std::vector<int>& members) const {
  if (!shared_memory_) return false;
  for (int m : members)
    if (host_of_[m] != host_of_[members.front()]) return false;
  return true;
}

uint64_t ClusterView::hash() const {
  // FNV-1a over the description: the same view gives the same digest in every process.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : describe()) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string ClusterView::describe() const {
  std::ostringstream out;
  out << nhosts() << " host(s), " << nranks() << " rank(s):";
  for (int h = 0; h < nhosts(); ++h) {
    out << " [";
    for (size_t i = 0; i < hosts_[h].size(); ++i) out << (i ? "," : "") << hosts_[h][i];
    out << "]";
  }
  out << "; inside a host " << intra_host_.name << " (" << intra_host_.latency_s * 1e6 << " us, "
      << intra_host_.bandwidth_Bps / 1e9 << " GB/s), between hosts " << inter_host_.name << " ("
      << inter_host_.latency_s * 1e6 << " us, " << inter_host_.bandwidth_Bps / 1e9
      << " GB/s), memory " << memory_bandwidth_ / 1e9 << " GB/s per host, " << rank_memory_bandwidth_ / 1e9
      << " GB/s per rank";
  return out.str();
}

}  // namespace dc
