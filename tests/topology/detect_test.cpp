// Detection on hwloc XML exports of real machines (tests/topology/fixtures/hwloc) and on sysfs
// fixture trees describing their NICs.
#include <gtest/gtest.h>

#include "base/error.h"
#include "topology/detect.h"
#include "topology_test_util.h"

namespace dc::topo::test {
namespace {

NodeTopology detect_xml(const std::string& name, const std::string& sysfs = "") {
  DetectOptions options;
  options.xml_path = hwloc_xml(name);
  if (!sysfs.empty()) options.sysfs_root = fixture("sysfs/" + sysfs);
  return detect_node(options);
}

TEST(DetectXml, NormalIoMachineHasItsGpusAndTheMlx5HcaBesideTheCudaGpu) {
  DC_REQUIRE_HWLOC();
  const NodeTopology node = detect_xml("32em64t-2n8c2t-pci-normalio.xml");
  EXPECT_EQ(node.hostname, "conan");
  EXPECT_EQ(node.packages, 2);
  EXPECT_EQ(node.numa_nodes, 2);
  EXPECT_EQ(node.cores, 16);
  EXPECT_EQ(node.pus, 32);
  // Three NVIDIA 3D controllers (10de:1094); hwloc has a CUDA device for the one at 84:00.0. The
  // AMD GPU (1002:6798) and the Matrox VGA (102b:0532) are not NVIDIA GPUs.
  ASSERT_EQ(node.gpus.size(), 3u);
  EXPECT_EQ(node.gpus[0].pci_busid, "0000:03:00.0");
  EXPECT_EQ(node.gpus[1].pci_busid, "0000:83:00.0");
  EXPECT_EQ(node.gpus[2].pci_busid, "0000:84:00.0");
  for (const Gpu& gpu : node.gpus) EXPECT_EQ(gpu.vendor_id, 0x10de);
  EXPECT_EQ(node.gpus[2].cuda_device, "cuda0");
  EXPECT_EQ(node.gpus[2].model, "Tesla K40m");
  EXPECT_EQ(node.gpus[0].numa, 0);
  EXPECT_EQ(node.gpus[2].numa, 1);

  const Nic* hca = find_nic(node, "mlx5_0:1");
  ASSERT_NE(hca, nullptr) << describe(node);
  EXPECT_EQ(hca->rdma_device, "mlx5_0");
  EXPECT_EQ(hca->port, 1);
  EXPECT_EQ(hca->netdev, "ib0");
  EXPECT_EQ(hca->pci_busid, "0000:04:00.0");
  EXPECT_EQ(hca->link_layer, LinkLayer::InfiniBand);  // ib0's 20-byte IPoIB address
  EXPECT_EQ(hca->state, LinkState::Up);               // Port1State 4 (ACTIVE)
  EXPECT_EQ(hca->speed_mbps, 0u);                     // an export has no sysfs
  ASSERT_NE(find_nic(node, "eth0"), nullptr);
  EXPECT_EQ(find_nic(node, "eth0")->link_layer, LinkLayer::Ethernet);
  ASSERT_NE(find_nic(node, "eth1"), nullptr);
  EXPECT_EQ(node.nics.size(), 3u);

  // The CUDA GPU and the HCA share root port 80:03.0: one bridge apart.
  const int hca_index = nic_index(node, "mlx5_0:1");
  EXPECT_EQ(node.gpus[2].nearest_nic, hca_index);
  EXPECT_EQ(node.paths[2][static_cast<size_t>(hca_index)].path, NicPath::SameSwitch);
  EXPECT_EQ(node.paths[2][static_cast<size_t>(hca_index)].bridges, 1);
  // 83:00.0 is under another root port of the same host bridge; 03:00.0 is on the other socket.
  EXPECT_EQ(node.paths[1][static_cast<size_t>(hca_index)].path, NicPath::HostBridge);
  EXPECT_EQ(node.paths[0][static_cast<size_t>(hca_index)].path, NicPath::System);
  EXPECT_EQ(hca->nearest_gpu, 2);
  EXPECT_EQ(hca->gpu_path, NicPath::SameSwitch);
  EXPECT_EQ(hca->rail, 0);
}

TEST(DetectXml, Dgx2HasSixteenGpusAndNoNic) {
  DC_REQUIRE_HWLOC();
  const NodeTopology node = detect_xml("nvidiaDGX2.xml");
  EXPECT_EQ(node.hostname, "nvidiaDGX2");  // the export has no HostName: the file's name
  EXPECT_EQ(node.packages, 2);
  ASSERT_EQ(node.gpus.size(), 16u);
  int on_numa0 = 0;
  for (size_t g = 0; g < node.gpus.size(); ++g) {
    EXPECT_EQ(node.gpus[g].nvml_device, "nvml" + std::to_string(g)) << node.gpus[g].pci_busid;
    EXPECT_EQ(node.gpus[g].device_id, 0x1db8);
    EXPECT_EQ(node.gpus[g].nearest_nic, -1);
    on_numa0 += node.gpus[g].numa == 0 ? 1 : 0;
  }
  EXPECT_EQ(on_numa0, 8);
  EXPECT_EQ(node.gpus.front().pci_busid, "0000:34:00.0");
  EXPECT_EQ(node.gpus.back().pci_busid, "0000:e7:00.0");
  EXPECT_TRUE(node.nics.empty());  // the NVSwitches (10de:1ac2, class 0680) are neither
}

TEST(DetectXml, Power8GpusHaveCudaAndNvmlDevices) {
  DC_REQUIRE_HWLOC();
  const NodeTopology node = detect_xml("power8gpudistances.xml");
  ASSERT_EQ(node.gpus.size(), 4u);
  EXPECT_EQ(node.gpus[0].pci_busid, "0002:01:00.0");
  EXPECT_EQ(node.gpus[3].pci_busid, "000b:01:00.0");
  for (size_t g = 0; g < 4; ++g) {
    EXPECT_EQ(node.gpus[g].cuda_device, "cuda" + std::to_string(g));
    EXPECT_EQ(node.gpus[g].nvml_device, "nvml" + std::to_string(g));
  }
}

TEST(DetectXml, Mirage004HasTheInfinibandHcaAndEthernetPorts) {
  DC_REQUIRE_HWLOC();
  const NodeTopology node = detect_xml("24em64t-2n6c2t-pci.xml");
  EXPECT_EQ(node.hostname, "mirage004");
  EXPECT_EQ(node.gpus.size(), 3u);
  // hwloc knows mlx4_0 and its two interfaces but not which port each is on: they stay
  // interfaces of the HCA, told apart by their addresses.
  const Nic* ib0 = find_nic(node, "ib0");
  ASSERT_NE(ib0, nullptr) << describe(node);
  EXPECT_EQ(ib0->rdma_device, "mlx4_0");
  EXPECT_EQ(ib0->link_layer, LinkLayer::InfiniBand);
  EXPECT_EQ(ib0->pci_busid, "0000:05:00.0");
  const Nic* eth2 = find_nic(node, "eth2");
  ASSERT_NE(eth2, nullptr);
  EXPECT_EQ(eth2->rdma_device, "mlx4_0");
  EXPECT_EQ(eth2->link_layer, LinkLayer::Ethernet);
  for (const char* name : {"eth0", "eth1"}) {
    const Nic* eth = find_nic(node, name);
    ASSERT_NE(eth, nullptr) << name;
    EXPECT_TRUE(eth->rdma_device.empty());
    EXPECT_EQ(eth->link_layer, LinkLayer::Ethernet);
  }
  EXPECT_EQ(node.nics.size(), 4u);
  // Equally near and equally unknown: the HCA's interfaces first, spread over the GPUs.
  EXPECT_EQ(node.nics[static_cast<size_t>(node.gpus[0].nearest_nic)].rdma_device, "mlx4_0");
  EXPECT_NE(node.gpus[0].nearest_nic, node.gpus[1].nearest_nic);
}

TEST(DetectXml, Mirage004WithItsSysfsHasAnInfinibandPortAndARocePort) {
  DC_REQUIRE_HWLOC();
  const NodeTopology node = detect_xml("24em64t-2n6c2t-pci.xml", "mirage004");
  const Nic* ib = find_nic(node, "mlx4_0:1");
  ASSERT_NE(ib, nullptr) << describe(node);
  EXPECT_EQ(ib->netdev, "ib0");  // dev_port 0
  EXPECT_EQ(ib->link_layer, LinkLayer::InfiniBand);
  EXPECT_EQ(ib->speed_mbps, 40000u);
  EXPECT_EQ(ib->state, LinkState::Up);
  EXPECT_EQ(ib->pci_busid, "0000:05:00.0");
  const Nic* roce = find_nic(node, "mlx4_0:2");
  ASSERT_NE(roce, nullptr);
  EXPECT_EQ(roce->netdev, "eth2");  // the port's GID table names it
  EXPECT_EQ(roce->link_layer, LinkLayer::Ethernet);
  EXPECT_TRUE(roce->rdma());
  EXPECT_EQ(roce->speed_mbps, 10000u);
  EXPECT_EQ(find_nic(node, "ib0"), nullptr);  // bound to the ports, not NICs of their own
  EXPECT_EQ(find_nic(node, "eth2"), nullptr);

  const Nic* eth0 = find_nic(node, "eth0");
  ASSERT_NE(eth0, nullptr);
  EXPECT_EQ(eth0->speed_mbps, 1000u);
  EXPECT_EQ(eth0->state, LinkState::Up);
  const Nic* eth1 = find_nic(node, "eth1");
  ASSERT_NE(eth1, nullptr);
  EXPECT_EQ(eth1->state, LinkState::Down);
  EXPECT_EQ(eth1->speed_mbps, 0u);  // speed -1 while down
  // The bond is virtual and up: kept, with no PCI locality; docker0 (down) and lo are not.
  const Nic* bond = find_nic(node, "bond0");
  ASSERT_NE(bond, nullptr);
  EXPECT_TRUE(bond->pci_busid.empty());
  EXPECT_EQ(bond->nearest_gpu, -1);
  EXPECT_EQ(find_nic(node, "docker0"), nullptr);
  EXPECT_EQ(find_nic(node, "lo"), nullptr);
  EXPECT_EQ(node.nics.size(), 5u);
  EXPECT_EQ(node.nics.back().name, "bond0");  // virtual NICs come last

  // The 40 Gb/s InfiniBand port beats the 10 Gb/s RoCE port at the same distance, for every GPU.
  const int ib_index = nic_index(node, "mlx4_0:1");
  for (const Gpu& gpu : node.gpus) EXPECT_EQ(gpu.nearest_nic, ib_index) << gpu.pci_busid;
  EXPECT_EQ(ib->rail, 0);
  EXPECT_EQ(roce->rail, -1);
}

// Derived from nvidiaDGX2.xml by fixtures/hwloc/derive_dgx2_nics.py: one HCA per PCIe switch.
TEST(DetectXml, Dgx2WithEightHcasGivesEachGpuPairTheHcaOfItsSwitch) {
  DC_REQUIRE_HWLOC();
  const NodeTopology node = detect_xml("nvidiaDGX2-ib8.xml");
  ASSERT_EQ(node.gpus.size(), 16u);
  ASSERT_EQ(node.nics.size(), 8u) << describe(node);
  for (size_t g = 0; g < 16; ++g) {
    const int nic = node.gpus[g].nearest_nic;
    ASSERT_GE(nic, 0);
    EXPECT_EQ(node.nics[static_cast<size_t>(nic)].name, "mlx5_" + std::to_string(g / 2) + ":1") << g;
    EXPECT_EQ(node.paths[g][static_cast<size_t>(nic)].path, NicPath::SameSwitch);
    EXPECT_EQ(node.paths[g][static_cast<size_t>(nic)].bridges, 3);  // GPU port, switch, NIC port
  }
  for (size_t n = 0; n < 8; ++n) {
    EXPECT_EQ(node.nics[n].rail, static_cast<int>(n));
    EXPECT_EQ(node.nics[n].nearest_gpu, static_cast<int>(2 * n));
    EXPECT_EQ(node.nics[n].link_layer, LinkLayer::InfiniBand);
  }
  // GPU 0 to the HCA of the neighbouring switch under the same first-level switch: two switches.
  EXPECT_EQ(node.paths[0][1].path, NicPath::HostBridge);
  EXPECT_EQ(node.paths[0][1].bridges, 7);
}

// Derived: a dual-function HCA (mlx5_0, mlx5_1) beside GPUs 34/36 on socket 0, and mlx5_2 beside
// GPUs e0/e2 on socket 1. Every path class occurs, and ties spread GPUs over the two functions.
TEST(DetectXml, Dgx2WithThreeHcasChoosesTheNearestAndSpreadsTies) {
  DC_REQUIRE_HWLOC();
  const NodeTopology node = detect_xml("nvidiaDGX2-sparse.xml");
  ASSERT_EQ(node.nics.size(), 3u) << describe(node);
  ASSERT_EQ(node.nics[0].name, "mlx5_0:1");
  ASSERT_EQ(node.nics[1].name, "mlx5_1:1");
  ASSERT_EQ(node.nics[2].name, "mlx5_2:1");
  struct Expect {
    const char* gpu;
    const char* nic;
    NicPath path;
  };
  const Expect expected[] = {
      {"0000:34:00.0", "mlx5_0:1", NicPath::SameSwitch},  // tie between the two functions: first
      {"0000:36:00.0", "mlx5_1:1", NicPath::SameSwitch},  // tie: the one fewer GPUs chose
      {"0000:39:00.0", "mlx5_0:1", NicPath::HostBridge},  // neighbouring switch
      {"0000:3b:00.0", "mlx5_1:1", NicPath::HostBridge},
      {"0000:57:00.0", "mlx5_0:1", NicPath::Socket},  // other host bridge, same package
      {"0000:59:00.0", "mlx5_1:1", NicPath::Socket},
      {"0000:5c:00.0", "mlx5_0:1", NicPath::Socket},
      {"0000:5e:00.0", "mlx5_1:1", NicPath::Socket},
      {"0000:b7:00.0", "mlx5_2:1", NicPath::Socket},  // mlx5_2 is on this socket, mlx5_0/1 not
      {"0000:b9:00.0", "mlx5_2:1", NicPath::Socket},
      {"0000:bc:00.0", "mlx5_2:1", NicPath::Socket},
      {"0000:be:00.0", "mlx5_2:1", NicPath::Socket},
      {"0000:e0:00.0", "mlx5_2:1", NicPath::SameSwitch},
      {"0000:e2:00.0", "mlx5_2:1", NicPath::SameSwitch},
      {"0000:e5:00.0", "mlx5_2:1", NicPath::HostBridge},
      {"0000:e7:00.0", "mlx5_2:1", NicPath::HostBridge},
  };
  for (const Expect& e : expected) {
    const int g = gpu_index(node, e.gpu);
    ASSERT_GE(g, 0) << e.gpu;
    const int n = node.gpus[static_cast<size_t>(g)].nearest_nic;
    ASSERT_GE(n, 0) << e.gpu;
    EXPECT_EQ(node.nics[static_cast<size_t>(n)].name, e.nic) << e.gpu;
    EXPECT_EQ(node.paths[static_cast<size_t>(g)][static_cast<size_t>(n)].path, e.path) << e.gpu;
  }
  EXPECT_EQ(node.paths[0][2].path, NicPath::System);  // GPU 34 to mlx5_2, across sockets
  EXPECT_EQ(node.nics[2].nearest_gpu, gpu_index(node, "0000:e0:00.0"));
  EXPECT_EQ(node.nics[0].rail, 0);
  EXPECT_EQ(node.nics[1].rail, 1);
  EXPECT_EQ(node.nics[2].rail, 2);
}

TEST(DetectXml, EnvironmentNamesTheExport) {
  DC_REQUIRE_HWLOC();
  {
    ScopedEnv xml("DEEPCOMM_TOPO_XML", hwloc_xml("nvidiaDGX2.xml"));
    EXPECT_EQ(detect_node().gpus.size(), 16u);
  }
  {
    ScopedEnv ours("DEEPCOMM_TOPO_XML", std::nullopt);
    ScopedEnv hwlocs("HWLOC_XMLFILE", hwloc_xml("power8gpudistances.xml"));
    const NodeTopology node = detect_node();
    EXPECT_EQ(node.gpus.size(), 4u);
    EXPECT_NE(node.source.find("HWLOC_XMLFILE"), std::string::npos) << node.source;
  }
}

TEST(DetectXml, SysfsRootFromTheEnvironment) {
  DC_REQUIRE_HWLOC();
  ScopedEnv root("DEEPCOMM_SYSFS_ROOT", fixture("sysfs/mirage004"));
  DetectOptions options;
  options.xml_path = hwloc_xml("24em64t-2n6c2t-pci.xml");
  EXPECT_NE(find_nic(detect_node(options), "mlx4_0:2"), nullptr);
}

TEST(DetectXml, MissingOrBrokenExportIsAnError) {
  DetectOptions options;
  if (!hwloc_available()) {
    options.xml_path = hwloc_xml("nvidiaDGX2.xml");
    try {
      detect_node(options);
      FAIL() << "an export was read without hwloc";
    } catch (const dc::Error& e) {
      EXPECT_NE(std::string(e.what()).find("built without hwloc"), std::string::npos) << e.what();
    }
    return;
  }
  options.xml_path = fixture("hwloc/no-such-file.xml");
  EXPECT_THROW(detect_node(options), dc::Error);
  options.xml_path = fixture("sysfs/mirage004/class/net/eth0/type");  // not XML
  try {
    detect_node(options);
    FAIL() << "a file that is not XML loaded";
  } catch (const dc::Error& e) {
    EXPECT_EQ(e.code(), dcInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("type"), std::string::npos) << e.what();
  }
}

TEST(DetectLive, ThisMachineIsDescribed) {
  ScopedEnv xml("DEEPCOMM_TOPO_XML", std::nullopt);
  ScopedEnv hwlocs("HWLOC_XMLFILE", std::nullopt);
  ScopedEnv root("DEEPCOMM_SYSFS_ROOT", std::nullopt);
  const NodeTopology node = detect_node();
  EXPECT_FALSE(node.hostname.empty());
  EXPECT_GT(node.pus, 0);
  if (hwloc_available()) EXPECT_GT(node.packages, 0);
  for (const Nic& nic : node.nics) EXPECT_NE(nic.name, "lo");
  const std::string text = describe(node);
  EXPECT_NE(text.find("host " + node.hostname), std::string::npos) << text;
  EXPECT_EQ(node.paths.size(), node.gpus.size());
}

TEST(Describe, NamesEveryGpuAndNic) {
  DC_REQUIRE_HWLOC();
  const std::string text = describe(detect_xml("24em64t-2n6c2t-pci.xml", "mirage004"));
  for (const char* expected :
       {"host mirage004", "2 packages, 2 NUMA nodes, 12 cores, 24 PUs", "gpu0  0000:06:00.0  [10de:06d2]",
        "mlx4_0:1 (ib0)  0000:05:00.0  InfiniBand  40 Gb/s  up", "mlx4_0:2 (eth2)  0000:05:00.0  RoCE  10 Gb/s",
        "bond0  virtual", "-> mlx4_0:1 (host_bridge, 3 bridges)", "rail 0"}) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\n" << text;
  }
}

}  // namespace
}  // namespace dc::topo::test
