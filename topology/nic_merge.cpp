#include <algorithm>
#include <map>
#include <tuple>

#include "topology/nic_facts.h"

namespace dc::topo {
namespace {

template <typename T>
void take_known(T& into, const T& from, const T& unknown) {
  if (from != unknown) into = from;
}

void overlay(RdmaPortFacts& into, const RdmaPortFacts& from) {
  take_known(into.pci_busid, from.pci_busid, std::string());
  take_known(into.link_layer, from.link_layer, LinkLayer::Unknown);
  take_known(into.state, from.state, LinkState::Unknown);
  take_known(into.speed_mbps, from.speed_mbps, 0u);
  take_known(into.netdev, from.netdev, std::string());
}

void overlay(NetdevFacts& into, const NetdevFacts& from) {
  take_known(into.pci_busid, from.pci_busid, std::string());
  take_known(into.rdma_device, from.rdma_device, std::string());
  take_known(into.port, from.port, 0);
  take_known(into.link_layer, from.link_layer, LinkLayer::Unknown);
  take_known(into.state, from.state, LinkState::Unknown);
  take_known(into.speed_mbps, from.speed_mbps, 0u);
}

}  // namespace

std::vector<Nic> merge_nic_facts(const NicFacts& hwloc, const NicFacts& sysfs) {
  std::map<std::pair<std::string, int>, RdmaPortFacts> ports;
  for (const NicFacts* source : {&hwloc, &sysfs}) {
    for (const RdmaPortFacts& p : source->ports) {
      auto [it, inserted] = ports.try_emplace({p.device, p.port}, p);
      if (!inserted) overlay(it->second, p);
    }
  }
  std::map<std::string, NetdevFacts> netdevs;
  for (const NicFacts* source : {&hwloc, &sysfs}) {
    for (const NetdevFacts& d : source->netdevs) {
      auto [it, inserted] = netdevs.try_emplace(d.name, d);
      if (!inserted) overlay(it->second, d);
    }
  }

  std::map<std::string, int> ports_of_device;
  for (const auto& [key, port] : ports) ++ports_of_device[key.first];
  auto unknown_port_netdevs = [&](const std::string& device) {
    std::vector<const NetdevFacts*> found;
    for (const auto& [name, d] : netdevs) {
      if (d.rdma_device == device && d.port == 0) found.push_back(&d);
    }
    return found;
  };

  std::vector<Nic> nics;
  std::map<std::string, bool> bound;
  for (const auto& [key, p] : ports) {
    std::string netdev = p.netdev;
    if (netdev.empty()) {
      for (const auto& [name, d] : netdevs) {
        if (d.rdma_device == p.device && d.port == p.port) netdev = name;
      }
    }
    if (netdev.empty() && ports_of_device[p.device] == 1) {
      auto candidates = unknown_port_netdevs(p.device);
      if (candidates.size() == 1) netdev = candidates[0]->name;
    }
    Nic nic;
    nic.name = p.device + ":" + std::to_string(p.port);
    nic.rdma_device = p.device;
    nic.port = p.port;
    nic.netdev = netdev;
    nic.pci_busid = p.pci_busid;
    nic.link_layer = p.link_layer;
    nic.state = p.state;
    nic.speed_mbps = p.speed_mbps;
    auto d = netdevs.find(netdev);
    if (d != netdevs.end()) {
      bound[netdev] = true;
      if (nic.pci_busid.empty()) nic.pci_busid = d->second.pci_busid;
      if (nic.link_layer == LinkLayer::Unknown) nic.link_layer = d->second.link_layer;
      if (nic.state == LinkState::Unknown) nic.state = d->second.state;
      if (nic.speed_mbps == 0) nic.speed_mbps = d->second.speed_mbps;
    }
    nics.push_back(std::move(nic));
  }
  for (const auto& [name, d] : netdevs) {
    if (bound.count(name) != 0) continue;
    Nic nic;
    nic.name = name;
    nic.rdma_device = d.rdma_device;
    nic.netdev = name;
    nic.pci_busid = d.pci_busid;
    nic.link_layer = d.link_layer;
    nic.state = d.state;
    nic.speed_mbps = d.speed_mbps;
    nics.push_back(std::move(nic));
  }
  std::sort(nics.begin(), nics.end(), [](const Nic& a, const Nic& b) {
    return std::make_tuple(a.pci_busid.empty(), a.pci_busid, a.name) <
           std::make_tuple(b.pci_busid.empty(), b.pci_busid, b.name);
  });
  return nics;
}

}  // namespace dc::topo
