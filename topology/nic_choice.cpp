#include "topology/nic_choice.h"

#include <algorithm>
#include <tuple>

namespace dc::topo {
namespace {

using HopKind = PciLocality::HopKind;

int bridges_below(const PciLocality& loc, size_t count) {
  int bridges = 0;
  for (size_t i = 0; i < count; ++i) {
    if (loc.up[i].kind != HopKind::Cpu) ++bridges;
  }
  return bridges;
}

}  // namespace

GpuNicPath classify_path(const PciLocality& a, const PciLocality& b) {
  if (a.up.empty() || b.up.empty()) return {};
  for (size_t ia = 0; ia < a.up.size(); ++ia) {
    for (size_t ib = 0; ib < b.up.size(); ++ib) {
      if (a.up[ia].id != b.up[ib].id) continue;
      const HopKind lca = a.up[ia].kind;
      GpuNicPath result;
      result.bridges = bridges_below(a, ia) + bridges_below(b, ib) + (lca != HopKind::Cpu ? 1 : 0);
      if (lca == HopKind::Bridge && ia <= 1 && ib <= 1) {
        result.path = NicPath::SameSwitch;
      } else if (lca != HopKind::Cpu) {
        result.path = NicPath::HostBridge;
      } else if (a.package >= 0 && a.package == b.package) {
        result.path = NicPath::Socket;
      } else {
        result.path = NicPath::System;
      }
      return result;
    }
  }
  // Localities of one detection always meet at the machine; separate trees mean nothing is known.
  return {};
}

void choose_nearest_nics(NodeTopology& node) {
  const size_t gpus = node.gpus.size();
  const size_t nics = node.nics.size();
  node.paths.assign(gpus, std::vector<GpuNicPath>(nics));
  for (size_t g = 0; g < gpus; ++g) {
    for (size_t n = 0; n < nics; ++n) {
      node.paths[g][n] = classify_path(node.gpus[g].locality, node.nics[n].locality);
    }
  }

  std::vector<int> chosen_by(nics, 0);
  auto nic_key = [&](size_t g, size_t n) {
    const Nic& nic = node.nics[n];
    const GpuNicPath& p = node.paths[g][n];
    return std::make_tuple(nic.state == LinkState::Down, p.path, p.bridges, nic.rdma_device.empty(),
                           -static_cast<int64_t>(nic.speed_mbps), chosen_by[n], n);
  };
  for (size_t g = 0; g < gpus; ++g) {
    int best = -1;
    for (size_t n = 0; n < nics; ++n) {
      if (best < 0 || nic_key(g, n) < nic_key(g, static_cast<size_t>(best))) best = static_cast<int>(n);
    }
    node.gpus[g].nearest_nic = best;
    if (best >= 0) ++chosen_by[static_cast<size_t>(best)];
  }

  for (size_t n = 0; n < nics; ++n) {
    int best = -1;
    for (size_t g = 0; g < gpus; ++g) {
      const GpuNicPath& p = node.paths[g][n];
      if (p.path == NicPath::Unknown) continue;
      const GpuNicPath* b = best < 0 ? nullptr : &node.paths[static_cast<size_t>(best)][n];
      if (b == nullptr || std::tie(p.path, p.bridges) < std::tie(b->path, b->bridges)) best = static_cast<int>(g);
    }
    node.nics[n].nearest_gpu = best;
    node.nics[n].gpu_path = best < 0 ? NicPath::Unknown : node.paths[static_cast<size_t>(best)][n].path;
  }
  assign_rails(node);
}

void assign_rails(NodeTopology& node) {
  std::vector<bool> on_rail(node.nics.size(), false);
  if (node.gpus.empty()) {
    for (size_t n = 0; n < node.nics.size(); ++n) {
      const Nic& nic = node.nics[n];
      on_rail[n] = !nic.pci_busid.empty() && nic.state != LinkState::Down;
    }
  } else {
    for (const Gpu& gpu : node.gpus) {
      if (gpu.nearest_nic >= 0) on_rail[static_cast<size_t>(gpu.nearest_nic)] = true;
    }
  }
  int rail = 0;
  for (size_t n = 0; n < node.nics.size(); ++n) node.nics[n].rail = on_rail[n] ? rail++ : -1;
}

}  // namespace dc::topo
