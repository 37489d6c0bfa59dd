// The cluster view: hosts and local ranks from host identities, each host's node from the ranks'
// summaries with the topology file applied, rails, network tiers with their groups (calibrated
// α/β where given), fast groups, the topology order, subsets, and errors that name the file.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "topology/cluster_view.h"
#include "topology/topology_file.h"
#include "topology_test_util.h"

namespace dc {
namespace {

using topo::test::fixture;

// A detected node with the two NICs the two-tier example names.
topo::NodeSummary node_named(const std::string& host) {
  topo::NodeSummary node;
  node.host = host;
  for (const char* name : {"mlx5_0:1", "mlx5_1:1"}) {
    topo::SummaryNic nic;
    nic.name = name;
    node.nics.push_back(nic);
  }
  return node;
}

// 8 hosts gpu001..gpu008 with `ranks` ranks each, in blocks, as the bootstrap cards give them.
ClusterInputs eight_hosts(int ranks, const topo::TopologyFile* file) {
  ClusterInputs in;
  for (int h = 0; h < 8; ++h) {
    const std::string name = "gpu00" + std::to_string(h + 1);
    for (int r = 0; r < ranks; ++r) {
      in.host_ids.push_back("boot/netns:" + std::to_string(h));
      in.nodes.push_back(node_named(name));
    }
  }
  in.file = file;
  return in;
}

TEST(ClusterView, TwoTierFileGivesTiersGroupsAndRails) {
  const topo::TopologyFile file = topo::load_topology_file(fixture("files/two-tier.json"));
  const auto view = ClusterView::build(eight_hosts(2, &file));
  EXPECT_EQ(view->nranks(), 16);
  EXPECT_EQ(view->nhosts(), 8);
  EXPECT_EQ(view->host_name(2), "gpu003");
  ASSERT_EQ(view->network_tiers(), 2);
  // Calibrated α and β win over the declared latency and bandwidth.
  EXPECT_EQ(view->network_tier(0).name, "infiniband");
  EXPECT_DOUBLE_EQ(view->network_tier(0).latency_s, 2.8e-6);
  EXPECT_DOUBLE_EQ(view->network_tier(0).bandwidth_Bps, 1e9 / 0.0205);
  EXPECT_TRUE(view->network_tier(0).per_rail);
  EXPECT_DOUBLE_EQ(view->network_tier(1).latency_s, 10e-6);
  EXPECT_DOUBLE_EQ(view->network_tier(1).bandwidth_Bps, 100e9 / 8);
  // island-a by names, island-b by indices 4-7.
  ASSERT_EQ(view->ngroups(), 2);
  EXPECT_EQ(view->hosts_in_group(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(view->hosts_in_group(1), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(view->tier_between(0, 6).name, "infiniband");  // hosts 0 and 3
  EXPECT_EQ(view->tier_between(0, 8).name, "ethernet");    // hosts 0 and 4
  EXPECT_EQ(view->tier_between(0, 1).name, "shm");
  // Every host has the two rails of the "*" entry; local rank i uses rail i mod 2.
  EXPECT_EQ(view->rails(5), 2);
  EXPECT_EQ(view->rail_of(11), 1);
  EXPECT_EQ(view->reach(0).hosts, (std::vector<int>{3, 4}));
  EXPECT_EQ(view->reach(0).ranks, (std::vector<int>{6, 8}));
  EXPECT_NE(view->describe().find("2 fast group(s) of 4 host(s)"), std::string::npos) << view->describe();
}

TEST(ClusterView, WithoutAFileOneDefaultNetworkTier) {
  const auto view = ClusterView::build(eight_hosts(1, nullptr));
  ASSERT_EQ(view->network_tiers(), 1);
  EXPECT_EQ(view->network_tier(0).name, default_network_tier().name);
  EXPECT_EQ(view->ngroups(), 1);
  EXPECT_EQ(view->rails(0), 1);  // no NIC has a rail
}

TEST(ClusterView, HostsAFileLeavesOutTalkOverTheDefaultNetwork) {
  topo::TopologyFile file = topo::parse_topology_file(
      R"({"version": 1, "tiers": [{"name": "ib", "bandwidth_gbps": 200, "latency_us": 1,
          "groups": [{"hosts": [{"first": 0, "count": 2}]}]}]})",
      "islands.json");
  const auto view = ClusterView::blocks(3, 1, true, &file);
  ASSERT_EQ(view->network_tiers(), 2);
  EXPECT_EQ(view->tier_between(0, 1).name, "ib");
  EXPECT_EQ(view->tier_between(1, 2).name, default_network_tier().name);
  EXPECT_EQ(view->ngroups(), 2);  // {0, 1} and host 2 on its own
}

TEST(ClusterView, AHostInTwoGroupsOfATierIsAnErrorNamingTheFile) {
  const topo::TopologyFile file = topo::parse_topology_file(
      R"({"version": 1, "tiers": [{"name": "ib", "bandwidth_gbps": 200, "latency_us": 1,
          "groups": [{"hosts": ["gpu002"]},
                     {"hosts": [1]}]}]})",
      "clash.json");
  try {
    ClusterView::build(eight_hosts(1, &file));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), dcInvalidArgument);
    EXPECT_NE(
        std::string(e.what()).find("clash.json:3: tiers[0].groups[1]: host 1 (gpu002) is also in tiers[0].groups[0]"),
        std::string::npos)
        << e.what();
  }
}

TEST(ClusterView, AnEntryNamingANicAHostLacksIsAnError) {
  const topo::TopologyFile file = topo::parse_topology_file(
      R"({"version": 1, "hosts": [{"name": "*", "nics": [{"name": "mlx5_9:1", "rail": 0}]}]})", "nics.json");
  try {
    ClusterView::build(eight_hosts(1, &file));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nics.json:1: host gpu001 has no NIC mlx5_9:1"), std::string::npos)
        << e.what();
  }
}

TEST(ClusterView, TopologyOrderGroupsHostsThenLocalRanks) {
  // Ranks dealt round-robin over 4 hosts; hosts 0 and 2 form one group, 1 and 3 the other.
  const topo::TopologyFile file = topo::parse_topology_file(
      R"({"version": 1, "tiers": [{"name": "ib", "bandwidth_gbps": 200, "latency_us": 1,
          "groups": [{"hosts": [0, 2]}, {"hosts": [1, 3]}]},
         {"name": "eth", "bandwidth_gbps": 10, "latency_us": 20}]})",
      "order.json");
  ClusterInputs in;
  for (int r = 0; r < 8; ++r) in.host_ids.push_back("h" + std::to_string(r % 4));
  in.file = &file;
  const auto view = ClusterView::build(in);
  EXPECT_EQ(view->topology_order({0, 1, 2, 3, 4, 5, 6, 7}), (std::vector<int>{0, 4, 2, 6, 1, 5, 3, 7}));
}

TEST(ClusterView, SubsetKeepsTiersGroupsAndRails) {
  const topo::TopologyFile file = topo::load_topology_file(fixture("files/two-tier.json"));
  const auto view = ClusterView::build(eight_hosts(2, &file));
  const auto child = view->subset({15, 0, 9});  // hosts 7, 0, 4
  EXPECT_EQ(child->nhosts(), 3);
  EXPECT_EQ(child->host_name(0), "gpu008");
  EXPECT_EQ(child->rails(0), 2);
  EXPECT_EQ(child->ngroups(), 2);
  EXPECT_EQ(child->tier_between(1, 2).name, "ethernet");
  EXPECT_EQ(child->tier_between(0, 2).name, "infiniband");
  // Same inputs, same digest; another file, another digest.
  EXPECT_EQ(ClusterView::build(eight_hosts(2, &file))->hash(), view->hash());
  EXPECT_NE(ClusterView::build(eight_hosts(2, nullptr))->hash(), view->hash());
}

TEST(ClusterView, ItsTopologyFileLoadsBackToTheSameView) {
  const topo::TopologyFile file = topo::load_topology_file(fixture("files/two-tier.json"));
  const auto view = ClusterView::build(eight_hosts(2, &file));
  const topo::TopologyFile dumped =
      topo::parse_topology_file(topo::write_topology_file(topo::topology_file_of(*view)), "dump");
  ASSERT_EQ(dumped.hosts.size(), 8u);
  EXPECT_EQ(dumped.hosts[2].name, "gpu003");        // distinct names: entries by name
  EXPECT_EQ(dumped.hosts[2].node.nics[1].rail, 0);  // gpu003's rails as its entry swapped them
  const auto again = ClusterView::build(eight_hosts(2, &dumped));
  EXPECT_EQ(again->ngroups(), 2);
  EXPECT_EQ(again->rails(3), 2);
  for (int t = 0; t < 2; ++t) {
    EXPECT_EQ(again->network_tier(t).name, view->network_tier(t).name);
    EXPECT_NEAR(again->network_tier(t).latency_s, view->network_tier(t).latency_s, 1e-12);
    EXPECT_NEAR(again->network_tier(t).bandwidth_Bps, view->network_tier(t).bandwidth_Bps, 1e3);
  }
}

}  // namespace
}  // namespace dc
