// The node summary: round trips, and every malformed byte string is rejected with a message.
#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "topology/node_summary.h"
#include "topology_test_util.h"

namespace dc::topo::test {
namespace {

NodeSummary sample() {
  NodeSummary s;
  s.host = "dgx01.example";
  s.packages = 2;
  s.numa_nodes = 2;
  s.cores = 48;
  s.gpus = {{"0000:34:00.0", 0, 0}, {"0000:b7:00.0", 1, 2}};
  s.nics = {{"mlx5_0:1", "mlx5_0", 1, "ib0", "0000:35:00.0", LinkLayer::InfiniBand, LinkState::Up, 100000, 0, 0,
             NicPath::SameSwitch, 0},
            {"eth0", "", 0, "eth0", "", LinkLayer::Ethernet, LinkState::Down, 0, -1, -1, NicPath::Unknown, -1},
            {"mlx5_2:1", "mlx5_2", 1, "ens1np0", "0000:b8:00.0", LinkLayer::Ethernet, LinkState::Up, 200000, 1, 1,
             NicPath::SameSwitch, 1}};
  return s;
}

std::string decode_error(std::string_view bytes) {
  try {
    decode_summary(bytes);
  } catch (const dc::Error& e) {
    EXPECT_EQ(e.code(), dcInvalidArgument);
    return e.what();
  }
  return "(decoded)";
}

TEST(NodeSummary, RoundTrip) {
  const NodeSummary s = sample();
  EXPECT_EQ(check_summary(s), "");
  const std::string bytes = encode_summary(s);
  EXPECT_EQ(bytes.substr(0, 4), "DCN1");
  EXPECT_LT(bytes.size(), 256u);  // compact: 3 NICs, 2 GPUs
  EXPECT_EQ(decode_summary(bytes), s);
  NodeSummary empty;
  empty.host = "h";
  EXPECT_EQ(decode_summary(encode_summary(empty)), empty);
}

// What makes `auto` offer UCX: an RDMA port (InfiniBand or RoCE) whose link is up.
TEST(NodeSummary, ActiveRdmaPort) {
  NodeSummary s = sample();
  EXPECT_TRUE(has_active_rdma_port(s));
  s.nics[0].state = LinkState::Down;
  EXPECT_TRUE(has_active_rdma_port(s));  // the RoCE port mlx5_2:1 is still up
  s.nics[2].state = LinkState::Unknown;
  EXPECT_FALSE(has_active_rdma_port(s));
  s.nics[1].state = LinkState::Up;  // a plain interface is no RDMA port
  EXPECT_FALSE(has_active_rdma_port(s));
  s.nics[0].state = LinkState::Up;
  s.nics[0].port = 0;  // a device without a port number
  EXPECT_FALSE(has_active_rdma_port(s));
}

TEST(NodeSummary, OfDetectedNodes) {
  DC_REQUIRE_HWLOC();
  for (const char* xml :
       {"nvidiaDGX2-ib8.xml", "nvidiaDGX2-sparse.xml", "32em64t-2n8c2t-pci-normalio.xml", "nvidiaDGX2.xml"}) {
    DetectOptions options;
    options.xml_path = hwloc_xml(xml);
    const NodeTopology node = detect_node(options);
    const NodeSummary s = summarize(node);
    ASSERT_EQ(check_summary(s), "") << xml;
    EXPECT_EQ(decode_summary(encode_summary(s)), s) << xml;
    EXPECT_EQ(s.gpus.size(), node.gpus.size());
    for (size_t g = 0; g < s.gpus.size(); ++g) EXPECT_EQ(s.gpus[g].nearest_nic, node.gpus[g].nearest_nic);
  }
}

TEST(NodeSummary, EveryTruncationIsRejected) {
  const std::string bytes = encode_summary(sample());
  for (size_t length = 0; length < bytes.size(); ++length) {
    EXPECT_NE(decode_error(bytes.substr(0, length)), "(decoded)") << length;
  }
  EXPECT_EQ(decode_error(bytes + "x"), "node summary: trailing bytes");
  EXPECT_EQ(decode_error("XCN1" + bytes.substr(4)), "node summary: unknown format");
}

TEST(NodeSummary, EveryByteFlipIsDecodedConsistentlyOrRejected) {
  const std::string bytes = encode_summary(sample());
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned bit = 0; bit < 8; ++bit) {
      std::string flipped = bytes;
      flipped[i] = static_cast<char>(flipped[i] ^ (1u << bit));
      try {
        const NodeSummary s = decode_summary(flipped);
        EXPECT_EQ(check_summary(s), "");
        EXPECT_EQ(encode_summary(s), flipped);
      } catch (const dc::Error&) {}
    }
  }
}

TEST(NodeSummary, RandomBytesNeverCrash) {
  std::mt19937 random(42);
  const std::string valid = encode_summary(sample());
  for (int round = 0; round < 20000; ++round) {
    std::string bytes = round % 2 == 0 ? valid : std::string("DCN1");
    const size_t extra = random() % 64;
    for (size_t i = 0; i < extra; ++i) bytes[random() % bytes.size()] = static_cast<char>(random());
    for (size_t i = 0; i < extra % 8; ++i) bytes += static_cast<char>(random());
    try {
      EXPECT_EQ(check_summary(decode_summary(bytes)), "");
    } catch (const dc::Error&) {}
  }
}

TEST(NodeSummary, InconsistentValuesAreNamed) {
  struct Case {
    void (*change)(NodeSummary&);
    const char* problem;
  };
  const Case cases[] = {
      {[](NodeSummary& s) { s.host = ""; }, "host: not a valid host name"},
      {[](NodeSummary& s) { s.host = "two words"; }, "host: not a valid host name"},
      {[](NodeSummary& s) { s.cores = -1; }, "cores: out of range"},
      {[](NodeSummary& s) { s.gpus[1].pci_busid = "0000:b7:00"; }, "gpus[1].pci: not a PCI bus id"},
      {[](NodeSummary& s) { s.gpus[1].pci_busid = "0000:34:00.0"; }, "gpus[1].pci: 0000:34:00.0 is listed twice"},
      {[](NodeSummary& s) { s.gpus[0].nearest_nic = 3; }, "gpus[0].nic: no such NIC"},
      {[](NodeSummary& s) { s.gpus[0].numa = -2; }, "gpus[0].numa: out of range"},
      {[](NodeSummary& s) { s.nics[1].name = "mlx5_0:1"; }, "nics[1].name: mlx5_0:1 is listed twice"},
      {[](NodeSummary& s) { s.nics[1].name = "eth\x01"; }, "nics[1].name: not a valid name"},
      {[](NodeSummary& s) { s.nics[1].port = 2; }, "nics[1].port: a port needs an rdma_device"},
      {[](NodeSummary& s) { s.nics[0].port = 256; }, "nics[0].port: out of range"},
      {[](NodeSummary& s) { s.nics[0].nearest_gpu = 2; }, "nics[0].nearest_gpu: no such GPU"},
      {[](NodeSummary& s) { s.nics[1].gpu_path = NicPath::System; }, "nics[1].gpu_path: a path needs a nearest_gpu"},
      {[](NodeSummary& s) { s.nics[2].rail = 0; }, "nics[2].rail: 0 is also nics[0]'s"},
      {[](NodeSummary& s) { s.nics[2].rail = 1024; }, "nics[2].rail: out of range"},
      {[](NodeSummary& s) { s.nics[0].link_layer = static_cast<LinkLayer>(3); }, "nics[0].link_layer: not defined"},
      {[](NodeSummary& s) { s.nics.resize(kMaxSummaryDevices + 1); }, "nics: more than 1024"},
  };
  for (const Case& c : cases) {
    NodeSummary s = sample();
    c.change(s);
    EXPECT_EQ(check_summary(s), c.problem);
    EXPECT_THROW(encode_summary(s), dc::Error) << c.problem;
  }
}

TEST(NodeSummary, ValuesOutOfRangeOnTheWireAreRejected) {
  std::string bytes = encode_summary(sample());
  // The first NIC's link layer byte sits after its four strings and port.
  const size_t nic = bytes.find("mlx5_0:1") - 1;
  const size_t layer = nic + 1 + 8 + 1 + 6 + 1 + 1 + 3 + 1 + 12;
  ASSERT_EQ(bytes[layer], static_cast<char>(LinkLayer::InfiniBand));
  bytes[layer] = 9;
  EXPECT_EQ(decode_error(bytes), "node summary: link layer 9 is not defined");
}

}  // namespace
}  // namespace dc::topo::test
