// Path classes, the nearest-NIC order and rails on fake nodes built by hand.
#include <gtest/gtest.h>

#include "topology/nic_choice.h"

namespace dc::topo {
namespace {

using HopKind = PciLocality::HopKind;

// Ids: 1 machine, 10/11 packages, 20/21 host bridges, 30.. bridges.
PciLocality under(std::vector<PciLocality::Hop> up, int package) {
  PciLocality loc;
  loc.up = std::move(up);
  loc.package = package;
  return loc;
}
constexpr PciLocality::Hop kMachine{1, HopKind::Cpu};
constexpr PciLocality::Hop kPackage0{10, HopKind::Cpu};
constexpr PciLocality::Hop kPackage1{11, HopKind::Cpu};
constexpr PciLocality::Hop kHost0{20, HopKind::HostBridge};
constexpr PciLocality::Hop kHost0b{22, HopKind::HostBridge};
constexpr PciLocality::Hop kHost1{21, HopKind::HostBridge};
PciLocality::Hop bridge(uint64_t id) { return {id, HopKind::Bridge}; }

// Switch S (upstream 31 under root port 30) with downstream ports 32, 33, 34; switch T (36, ports
// 37, 38) under root port 35; all on host bridge 0 of package 0.
PciLocality in_switch_s(uint64_t port) {
  return under({bridge(port), bridge(31), bridge(30), kHost0, kPackage0, kMachine}, 0);
}
PciLocality in_switch_t(uint64_t port) {
  return under({bridge(port), bridge(36), bridge(35), kHost0, kPackage0, kMachine}, 0);
}

TEST(ClassifyPath, EachClass) {
  const GpuNicPath same = classify_path(in_switch_s(32), in_switch_s(33));
  EXPECT_EQ(same.path, NicPath::SameSwitch);
  EXPECT_EQ(same.bridges, 3);
  const GpuNicPath shared_port = classify_path(in_switch_s(32), in_switch_s(32));
  EXPECT_EQ(shared_port.path, NicPath::SameSwitch);
  EXPECT_EQ(shared_port.bridges, 1);
  const GpuNicPath two_switches = classify_path(in_switch_s(32), in_switch_t(37));
  EXPECT_EQ(two_switches.path, NicPath::HostBridge);
  EXPECT_EQ(two_switches.bridges, 7);  // 32, 31, 30, host bridge, 35, 36, 37
  const PciLocality other_host_bridge = under({bridge(40), kHost0b, kPackage0, kMachine}, 0);
  EXPECT_EQ(classify_path(in_switch_s(32), other_host_bridge).path, NicPath::Socket);
  const PciLocality other_socket = under({bridge(50), kHost1, kPackage1, kMachine}, 1);
  const GpuNicPath across = classify_path(in_switch_s(32), other_socket);
  EXPECT_EQ(across.path, NicPath::System);
  EXPECT_EQ(across.bridges, 6);
  EXPECT_EQ(classify_path(in_switch_s(32), PciLocality{}).path, NicPath::Unknown);
  // A bridge deeper below the common switch's upstream port: two switches crossed.
  const PciLocality deeper =
      under({bridge(60), bridge(61), bridge(33), bridge(31), bridge(30), kHost0, kPackage0, kMachine}, 0);
  EXPECT_EQ(classify_path(in_switch_s(32), deeper).path, NicPath::HostBridge);
  // Both under the machine, package unknown: across sockets as far as anyone can tell.
  const PciLocality no_package = under({bridge(70), kHost1, kMachine}, -1);
  EXPECT_EQ(classify_path(no_package, under({bridge(71), kHost0, kMachine}, -1)).path, NicPath::System);
}

Gpu gpu_at(const std::string& busid, PciLocality loc) {
  Gpu gpu;
  gpu.pci_busid = busid;
  gpu.locality = std::move(loc);
  return gpu;
}

Nic nic_at(const std::string& name, PciLocality loc, bool rdma = true, uint32_t speed = 100000,
           LinkState state = LinkState::Up) {
  Nic nic;
  nic.name = name;
  if (rdma) {
    nic.rdma_device = name;
    nic.port = 1;
  }
  nic.pci_busid = "0000:00:00.0";
  nic.speed_mbps = speed;
  nic.state = state;
  nic.locality = std::move(loc);
  return nic;
}

TEST(ChooseNearest, NearerClassWins) {
  NodeTopology node;
  node.gpus = {gpu_at("0000:01:00.0", in_switch_s(32))};
  node.nics = {nic_at("far", in_switch_t(37)), nic_at("near", in_switch_s(33))};
  choose_nearest_nics(node);
  EXPECT_EQ(node.gpus[0].nearest_nic, 1);
  EXPECT_EQ(node.nics[1].nearest_gpu, 0);
  EXPECT_EQ(node.nics[1].gpu_path, NicPath::SameSwitch);
  EXPECT_EQ(node.nics[0].gpu_path, NicPath::HostBridge);
  EXPECT_EQ(node.nics[1].rail, 0);
  EXPECT_EQ(node.nics[0].rail, -1);
}

TEST(ChooseNearest, DownNicComesLastEvenWhenNearest) {
  NodeTopology node;
  node.gpus = {gpu_at("0000:01:00.0", in_switch_s(32))};
  node.nics = {nic_at("near-down", in_switch_s(33), true, 100000, LinkState::Down),
               nic_at("far-up", under({bridge(50), kHost1, kPackage1, kMachine}, 1))};
  choose_nearest_nics(node);
  EXPECT_EQ(node.gpus[0].nearest_nic, 1);
}

TEST(ChooseNearest, FewerBridgesThenRdmaThenSpeed) {
  NodeTopology node;
  node.gpus = {gpu_at("0000:01:00.0", in_switch_s(32))};
  node.nics = {nic_at("other-port", in_switch_s(33)), nic_at("same-port", in_switch_s(32))};
  choose_nearest_nics(node);
  EXPECT_EQ(node.gpus[0].nearest_nic, 1);

  node.nics = {nic_at("plain-fast", in_switch_s(33), false, 400000), nic_at("hca", in_switch_s(34), true, 100000)};
  choose_nearest_nics(node);
  EXPECT_EQ(node.gpus[0].nearest_nic, 1);

  node.nics = {nic_at("slow", in_switch_s(33), true, 100000), nic_at("fast", in_switch_s(34), true, 200000)};
  choose_nearest_nics(node);
  EXPECT_EQ(node.gpus[0].nearest_nic, 1);
}

TEST(ChooseNearest, EquallyNearNicsAreSpreadOverGpus) {
  NodeTopology node;
  node.gpus = {gpu_at("0000:01:00.0", in_switch_s(32)), gpu_at("0000:02:00.0", in_switch_s(32)),
               gpu_at("0000:03:00.0", in_switch_s(32))};
  node.nics = {nic_at("a", in_switch_s(33)), nic_at("b", in_switch_s(34))};
  choose_nearest_nics(node);
  EXPECT_EQ(node.gpus[0].nearest_nic, 0);
  EXPECT_EQ(node.gpus[1].nearest_nic, 1);
  EXPECT_EQ(node.gpus[2].nearest_nic, 0);
  EXPECT_EQ(node.nics[0].rail, 0);
  EXPECT_EQ(node.nics[1].rail, 1);
}

TEST(ChooseNearest, WithoutGpusRailsNumberThePciNicsThatAreNotDown) {
  NodeTopology node;
  node.nics = {nic_at("a", in_switch_s(33)), nic_at("down", in_switch_s(34), true, 0, LinkState::Down),
               nic_at("b", in_switch_t(37)), nic_at("virtual", {})};
  node.nics[3].pci_busid.clear();
  choose_nearest_nics(node);
  EXPECT_EQ(node.nics[0].rail, 0);
  EXPECT_EQ(node.nics[1].rail, -1);
  EXPECT_EQ(node.nics[2].rail, 1);
  EXPECT_EQ(node.nics[3].rail, -1);
  EXPECT_EQ(node.nics[0].nearest_gpu, -1);
}

TEST(ChooseNearest, NoNicLeavesGpusWithout) {
  NodeTopology node;
  node.gpus = {gpu_at("0000:01:00.0", in_switch_s(32))};
  choose_nearest_nics(node);
  EXPECT_EQ(node.gpus[0].nearest_nic, -1);
  ASSERT_EQ(node.paths.size(), 1u);
  EXPECT_TRUE(node.paths[0].empty());
}

}  // namespace
}  // namespace dc::topo
