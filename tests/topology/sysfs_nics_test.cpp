// NIC facts from the sysfs fixture trees, and their merge with hwloc's.
#include <gtest/gtest.h>

#include "topology/nic_facts.h"
#include "topology/sysfs_nics.h"
#include "topology_test_util.h"

namespace dc::topo::test {
namespace {

const RdmaPortFacts* find_port(const NicFacts& facts, const std::string& device, int port) {
  for (const RdmaPortFacts& p : facts.ports) {
    if (p.device == device && p.port == port) return &p;
  }
  return nullptr;
}

TEST(SysfsNics, RoceHostPortsAndInterfaces) {
  const NicFacts facts = read_sysfs_nic_facts(fixture("sysfs/roce-host"));
  ASSERT_EQ(facts.ports.size(), 2u);
  const RdmaPortFacts* up = find_port(facts, "mlx5_0", 1);
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->link_layer, LinkLayer::Ethernet);
  EXPECT_EQ(up->speed_mbps, 100000u);
  EXPECT_EQ(up->state, LinkState::Up);
  EXPECT_EQ(up->netdev, "ens1f0np0");
  const RdmaPortFacts* down = find_port(facts, "mlx5_1", 1);
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->state, LinkState::Down);  // "1: DOWN"

  ASSERT_EQ(facts.netdevs.size(), 2u);
  EXPECT_EQ(facts.netdevs[0].name, "ens1f0np0");
  EXPECT_EQ(facts.netdevs[0].pci_busid, "0000:3b:00.0");  // from the device link
  EXPECT_EQ(facts.netdevs[0].rdma_device, "mlx5_0");
  EXPECT_EQ(facts.netdevs[0].port, 1);
  EXPECT_EQ(facts.netdevs[0].speed_mbps, 100000u);
  EXPECT_EQ(facts.netdevs[1].state, LinkState::Down);
}

TEST(SysfsNics, RoceHostMergesIntoTwoRocePorts) {
  const std::vector<Nic> nics = merge_nic_facts({}, read_sysfs_nic_facts(fixture("sysfs/roce-host")));
  ASSERT_EQ(nics.size(), 2u);
  EXPECT_EQ(nics[0].name, "mlx5_0:1");
  EXPECT_EQ(nics[0].netdev, "ens1f0np0");
  EXPECT_EQ(nics[0].pci_busid, "0000:3b:00.0");
  EXPECT_EQ(nics[0].link_layer, LinkLayer::Ethernet);
  EXPECT_TRUE(nics[0].rdma());
  EXPECT_EQ(nics[1].name, "mlx5_1:1");
  EXPECT_EQ(nics[1].pci_busid, "0000:3b:00.1");
  EXPECT_EQ(nics[1].state, LinkState::Down);
}

TEST(SysfsNics, MissingRootHasNoFacts) {
  const NicFacts facts = read_sysfs_nic_facts(fixture("sysfs/no-such-machine"));
  EXPECT_TRUE(facts.ports.empty());
  EXPECT_TRUE(facts.netdevs.empty());
}

TEST(MergeNicFacts, SysfsWinsWhereItKnowsAndHwlocFillsTheRest) {
  NicFacts hwloc;
  hwloc.ports.push_back({"mlx5_0", 1, "0000:04:00.0", LinkLayer::Unknown, LinkState::Down, 0, ""});
  hwloc.netdevs.push_back({"ib0", "0000:04:00.0", "mlx5_0", 0, LinkLayer::InfiniBand, LinkState::Unknown, 0});
  NicFacts sysfs;
  sysfs.ports.push_back({"mlx5_0", 1, "", LinkLayer::InfiniBand, LinkState::Up, 200000, ""});
  const std::vector<Nic> nics = merge_nic_facts(hwloc, sysfs);
  ASSERT_EQ(nics.size(), 1u);  // ib0 is the single port's only interface: bound to it
  EXPECT_EQ(nics[0].name, "mlx5_0:1");
  EXPECT_EQ(nics[0].netdev, "ib0");
  EXPECT_EQ(nics[0].pci_busid, "0000:04:00.0");
  EXPECT_EQ(nics[0].state, LinkState::Up);
  EXPECT_EQ(nics[0].speed_mbps, 200000u);
}

TEST(MergeNicFacts, InterfacesOfUnknownPortOnATwoPortDeviceStaySeparate) {
  NicFacts hwloc;
  hwloc.ports.push_back({"mlx4_0", 1, "0000:05:00.0", LinkLayer::Unknown, LinkState::Up, 0, ""});
  hwloc.ports.push_back({"mlx4_0", 2, "0000:05:00.0", LinkLayer::Unknown, LinkState::Up, 0, ""});
  hwloc.netdevs.push_back({"ib0", "0000:05:00.0", "mlx4_0", 0, LinkLayer::InfiniBand, LinkState::Unknown, 0});
  const std::vector<Nic> nics = merge_nic_facts(hwloc, {});
  ASSERT_EQ(nics.size(), 3u);
  EXPECT_EQ(nics[0].name, "ib0");
  EXPECT_FALSE(nics[0].rdma());
  EXPECT_EQ(nics[0].rdma_device, "mlx4_0");
  EXPECT_TRUE(nics[1].netdev.empty());
}

}  // namespace
}  // namespace dc::topo::test
