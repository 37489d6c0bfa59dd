// The topology file: the documented example, round trips, every schema error with its line and
// field, host entries applied to a node, loading from the environment and dumping.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "base/error.h"
#include "topology/topology_file.h"
#include "topology_test_util.h"

namespace dc::topo::test {
namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_topology_file(text, "x.json");
  } catch (const dc::Error& e) {
    EXPECT_EQ(e.code(), dcInvalidArgument);
    return e.what();
  }
  return "(parsed)";
}

// `members` (JSON object members on one line) with `field` set to the JSON value `value`.
std::string with_member(std::string members, const std::string& field, const std::string& value) {
  const std::string key = "\"" + field + "\": ";
  const size_t at = members.find(key);
  if (at == std::string::npos) {
    members += ", " + key + value;
  } else {
    const size_t end = members.find(',', at);
    members.replace(at, (end == std::string::npos ? members.size() : end) - at, key + value);
  }
  return members;
}

// The file with one tier whose member `field` has the JSON value `value`, on line 3.
std::string tier_with(const std::string& field, const std::string& value) {
  const std::string members = "\"name\": \"ib\", \"bandwidth_gbps\": 400, \"latency_us\": 2";
  return "{\"version\": 1,\n \"tiers\": [\n  {" + with_member(members, field, value) + "}\n]}";
}

// The file with one host entry whose NIC has the member `field` set to `value`, on line 4.
std::string nic_with(const std::string& field, const std::string& value) {
  return "{\"version\": 1,\n \"hosts\": [\n  {\"name\": \"h\", \"nics\": [\n   {\"name\": \"mlx5_0:1\", \"rdma_device\": \"mlx5_0\", \"" +
         field + "\": " + value + "}]}]}";
}

// The file with one tuning rule whose member `field` has the JSON value `value`, on line 3.
std::string tuning_with(const std::string& field, const std::string& value) {
  const std::string members =
      "\"collective\": \"allreduce\", \"algorithm\": \"tree\", \"min_bytes\": 1024, \"max_bytes\": 4096";
  return "{\"version\": 1,\n \"tuning\": [\n  {" + with_member(members, field, value) + "}\n]}";
}

TEST(TopologyFile, TwoTierExampleParses) {
  const TopologyFile file = load_topology_file(fixture("files/two-tier.json"));
  ASSERT_EQ(file.tiers.size(), 2u);
  const Tier& ib = file.tiers[0];
  EXPECT_EQ(ib.name, "infiniband");
  EXPECT_EQ(ib.bandwidth_gbps, 400);
  EXPECT_EQ(ib.latency_us, 1.5);
  EXPECT_TRUE(ib.per_rail);
  ASSERT_TRUE(ib.calibration);
  EXPECT_EQ(ib.calibration->alpha_us, 2.8);
  EXPECT_EQ(ib.calibration->beta_ns_per_byte, 0.0205);
  ASSERT_EQ(ib.groups.size(), 2u);
  EXPECT_EQ(ib.groups[0].name, "island-a");
  ASSERT_EQ(ib.groups[0].hosts.size(), 4u);
  EXPECT_EQ(ib.groups[0].hosts[2].name, "gpu003");
  EXPECT_EQ(ib.groups[0].hosts[2].line, 11);
  ASSERT_EQ(ib.groups[1].hosts.size(), 1u);
  EXPECT_TRUE(ib.groups[1].hosts[0].name.empty());
  EXPECT_EQ(ib.groups[1].hosts[0].first, 4u);
  EXPECT_EQ(ib.groups[1].hosts[0].count, 4u);
  EXPECT_EQ(file.tiers[1].name, "ethernet");
  EXPECT_EQ(file.tiers[1].bandwidth_gbps, 100);
  EXPECT_TRUE(file.tiers[1].groups.empty());
  EXPECT_FALSE(file.tiers[1].per_rail);
  EXPECT_FALSE(file.tiers[1].calibration);

  ASSERT_EQ(file.hosts.size(), 2u);
  EXPECT_EQ(file.hosts[0].name, "*");
  EXPECT_EQ(file.hosts[1].node.nics[1].speed_mbps, 200000u);
  EXPECT_EQ(file.hosts[1].nic_lines[1], 33);
  EXPECT_EQ(find_host_entry(file, "gpu003", 2), &file.hosts[1]);
  EXPECT_EQ(find_host_entry(file, "gpu005", 4), &file.hosts[0]);
}

TEST(TopologyFile, TuningRulesParseAndWriteBack) {
  const std::string text =
      "{\"version\": 1, \"tuning\": [\n"
      "{\"collective\": \"allreduce\", \"algorithm\": \"tree\", \"min_bytes\": 8192, \"max_bytes\": 65536, \"hosts\": 4, \"ranks\": 8},\n"
      "{\"collective\": \"broadcast\", \"algorithm\": \"pipeline\", \"min_bytes\": 0, \"max_bytes\": 0}]}";
  const TopologyFile file = parse_topology_file(text, "t.json");
  ASSERT_EQ(file.tuning.size(), 2u);
  const TuningRule& first = file.tuning[0];
  EXPECT_EQ(first.collective, "allreduce");
  EXPECT_EQ(first.algorithm, "tree");
  EXPECT_EQ(first.min_bytes, 8192u);
  EXPECT_EQ(first.max_bytes, 65536u);
  EXPECT_EQ(first.hosts, 4);
  EXPECT_EQ(first.ranks, 8);
  EXPECT_EQ(first.line, 2);
  EXPECT_EQ(file.tuning[1].hosts, 0);  // any
  EXPECT_EQ(file.tuning[1].line, 3);
  const std::string written = write_topology_file(file);
  EXPECT_NE(written.find("{\"collective\": \"allreduce\", \"algorithm\": \"tree\", \"min_bytes\": 8192, \"max_bytes\": "
                         "65536, \"hosts\": 4, \"ranks\": 8}"),
            std::string::npos)
      << written;
  EXPECT_EQ(write_topology_file(parse_topology_file(written, "written")), written);
}

TEST(TopologyFile, WriteThenParseGivesTheSameText) {
  const TopologyFile file = load_topology_file(fixture("files/two-tier.json"));
  const std::string text = write_topology_file(file);
  const std::string again = write_topology_file(parse_topology_file(text, "written"));
  EXPECT_EQ(text, again);
  EXPECT_NE(text.find("{\"name\": \"island-b\", \"hosts\": [{\"first\": 4, \"count\": 4}]}"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\"calibration\": {\"alpha_us\": 2.8, \"beta_ns_per_byte\": 0.0205}"), std::string::npos) << text;
  EXPECT_NE(text.find("\"per_rail\": true"), std::string::npos) << text;
}

TEST(TopologyFile, DumpOfADetectedNodeReadsBack) {
  DC_REQUIRE_HWLOC();
  DetectOptions options;
  options.xml_path = hwloc_xml("24em64t-2n6c2t-pci.xml");
  options.sysfs_root = fixture("sysfs/mirage004");
  const NodeTopology node = detect_node(options);
  const std::string path = ::testing::TempDir() + "/dump.json";
  dump_topology_file(topology_file_of(node), path);
  const TopologyFile file = load_topology_file(path);
  std::remove(path.c_str());
  ASSERT_EQ(file.hosts.size(), 1u);
  EXPECT_EQ(file.hosts[0].name, "mirage004");
  EXPECT_EQ(file.hosts[0].node, summarize(node));  // every field survives
  EXPECT_NE(write_topology_file(file).find(
                "{\"name\": \"mlx4_0:2\", \"rdma_device\": \"mlx4_0\", \"port\": 2, \"netdev\": \"eth2\", \"pci\": "
                "\"0000:05:00.0\", \"link_layer\": \"ethernet\", \"speed_gbps\": 10, \"state\": \"up\", \"numa\": 0, "
                "\"nearest_gpu\": \"0000:06:00.0\", \"gpu_path\": \"host_bridge\"}"),
            std::string::npos)
      << write_topology_file(file);
}

TEST(TopologyFile, DumpToAnUnwritablePathIsAnError) {
  EXPECT_THROW(dump_topology_file(TopologyFile{}, "/nonexistent-dir/x.json"), dc::Error);
}

struct ErrorCase {
  std::string text;
  std::string expected;  // a prefix of the message after "topology file "
};

TEST(TopologyFile, EveryFieldErrorNamesLineAndField) {
  const ErrorCase cases[] = {
      // top level
      {"[]", "x.json:1: (top level): expected an object, got an array"},
      {"{}", "x.json:1: version: required member is missing"},
      {"{\"version\": 2}", "x.json:1: version: expected 1 (the only version), got 2"},
      {"{\"version\": \"1\"}", "x.json:1: version: expected 1 (the only version), got a string"},
      {"{\"version\": 1,\n\"tier\": []}",
       "x.json:2: tier: unknown member (expected one of version, tiers, hosts, tuning)"},
      {"{\"version\": 1,\n\"tiers\": {}}", "x.json:2: tiers: expected an array, got an object"},
      // tiers
      {"{\"version\": 1,\n\"tiers\": [\n7]}", "x.json:3: tiers[0]: expected an object, got a number"},
      {"{\"version\": 1,\n\"tiers\": [\n{\"name\": \"ib\", \"latency_us\": 1}]}",
       "x.json:3: tiers[0].bandwidth_gbps: required member is missing"},
      {tier_with("bandwidth_gbps", "\"fast\""),
       "x.json:3: tiers[0].bandwidth_gbps: expected a positive number (at most 1000000), got a string"},
      {tier_with("bandwidth_gbps", "0"),
       "x.json:3: tiers[0].bandwidth_gbps: expected a positive number (at most 1000000), got 0"},
      {tier_with("bandwidth_gbps", "-400"),
       "x.json:3: tiers[0].bandwidth_gbps: expected a positive number (at most 1000000), got -400"},
      {tier_with("bandwidth_gbps", "1e999"),
       "x.json:3: tiers[0].bandwidth_gbps: expected a positive number (at most 1000000), got 1e999"},
      {tier_with("bandwidth_gbps", "1e-999"),
       "x.json:3: tiers[0].bandwidth_gbps: expected a positive number (at most 1000000), got 1e-999"},
      {tier_with("bandwidth_gbps", "null"),
       "x.json:3: tiers[0].bandwidth_gbps: expected a positive number (at most 1000000), got null"},
      {tier_with("per_rail", "1"), "x.json:3: tiers[0].per_rail: expected a boolean, got a number"},
      {tier_with("latency_us", "-1"), "x.json:3: tiers[0].latency_us: expected a number from 0 to 10000000, got -1"},
      {tier_with("latency_us", "[1]"),
       "x.json:3: tiers[0].latency_us: expected a number from 0 to 10000000, got an array"},
      {tier_with("name", "\"\""),
       "x.json:3: tiers[0].name: expected a name of 1 to 64 printable ASCII characters without spaces, got \"\""},
      {tier_with("name", "\"in finiband\""), "x.json:3: tiers[0].name: expected a name of 1 to 64"},
      {tier_with("name", "5"), "x.json:3: tiers[0].name: expected a string, got a number"},
      {tier_with("bandwith_gbps", "400"),
       "x.json:3: tiers[0].bandwith_gbps: unknown member (expected one of name, bandwidth_gbps, latency_us, per_rail, groups, calibration)"},
      {tier_with("groups", "[]"), "x.json:3: tiers[0].groups: expected at least one element"},
      {tier_with("groups", "[{\"name\": \"a\"}]"), "x.json:3: tiers[0].groups[0].hosts: required member is missing"},
      {tier_with("groups", "[{\"hosts\": []}]"), "x.json:3: tiers[0].groups[0].hosts: expected at least one element"},
      {tier_with("groups", "[{\"hosts\": [true]}]"),
       "x.json:3: tiers[0].groups[0].hosts[0]: expected a host name, a host index or {\"first\": i, \"count\": n}, got a boolean"},
      {tier_with("groups", "[{\"hosts\": [-1]}]"),
       "x.json:3: tiers[0].groups[0].hosts[0]: expected an integer from 0 to 1048575, got -1"},
      {tier_with("groups", "[{\"hosts\": [1.5]}]"),
       "x.json:3: tiers[0].groups[0].hosts[0]: expected an integer from 0 to 1048575, got 1.5"},
      {tier_with("groups", "[{\"hosts\": [99999999999999999999999]}]"),
       "x.json:3: tiers[0].groups[0].hosts[0]: expected an integer from 0 to 1048575, got 99999999999999999999999"},
      {tier_with("groups", "[{\"hosts\": [{\"first\": 0}]}]"),
       "x.json:3: tiers[0].groups[0].hosts[0].count: required member is missing"},
      {tier_with("groups", "[{\"hosts\": [{\"first\": 1048575, \"count\": 2}]}]"),
       "x.json:3: tiers[0].groups[0].hosts[0].count: expected an integer from 1 to 1, got 2"},
      {tier_with("groups", "[{\"hosts\": [{\"first\": 0, \"count\": 0}]}]"),
       "x.json:3: tiers[0].groups[0].hosts[0].count: expected an integer from 1 to 1048576, got 0"},
      {tier_with("groups", "[{\"hosts\": [\"a\"]}, {\"hosts\": [\"b\", \"a\"]}]"),
       "x.json:3: tiers[0].groups[1].hosts[1]: host a is already in tiers[0].groups[0]"},
      {tier_with("groups", "[{\"hosts\": [{\"first\": 0, \"count\": 8}]}, {\"hosts\": [7]}]"),
       "x.json:3: tiers[0].groups[1].hosts[0]: host index 7 is already in tiers[0].groups[0]"},
      {tier_with("groups", "[{\"hosts\": [9]}, {\"hosts\": [{\"first\": 4, \"count\": 8}]}]"),
       "x.json:3: tiers[0].groups[1].hosts[0]: host index 9 is already in tiers[0].groups[0]"},
      {tier_with("groups", "[{\"name\": \"g\", \"hosts\": [1]}, {\"name\": \"g\", \"hosts\": [2]}]"),
       "x.json:3: tiers[0].groups[1].name: g names another group of this tier too"},
      {tier_with("calibration", "{\"alpha_us\": 1}"),
       "x.json:3: tiers[0].calibration.beta_ns_per_byte: required member is missing"},
      {tier_with("calibration", "{\"alpha_us\": 1, \"beta_ns_per_byte\": 0}"),
       "x.json:3: tiers[0].calibration.beta_ns_per_byte: expected a positive number (at most 10000000), got 0"},
      {tier_with("calibration", "{\"alpha_us\": \"1\", \"beta_ns_per_byte\": 1}"),
       "x.json:3: tiers[0].calibration.alpha_us: expected a number from 0 to 10000000, got a string"},
      {"{\"version\": 1, \"tiers\": [\n{\"name\": \"a\", \"bandwidth_gbps\": 1, \"latency_us\": 1},\n{\"name\": \"b\", \"bandwidth_gbps\": 1, \"latency_us\": 1}]}",
       "x.json:3: tiers[1]: never used: tiers[0] has no groups, so it joins every host"},
      {"{\"version\": 1, \"tiers\": [\n{\"name\": \"a\", \"bandwidth_gbps\": 1, \"latency_us\": 1, \"groups\": [{\"hosts\": [0]}]},\n{\"name\": \"a\", \"bandwidth_gbps\": 1, \"latency_us\": 1}]}",
       "x.json:3: tiers[1].name: a is also tiers[0]'s name"},
      // hosts
      {"{\"version\": 1, \"hosts\": [\n{\"nics\": []}]}",
       "x.json:2: hosts[0]: expected exactly one of \"name\" (a host name or \"*\") and \"index\""},
      {"{\"version\": 1, \"hosts\": [\n{\"name\": \"a\", \"index\": 1}]}",
       "x.json:2: hosts[0]: expected exactly one of"},
      {"{\"version\": 1, \"hosts\": [\n{\"index\": 1},\n{\"index\": 1}]}",
       "x.json:3: hosts[1].index: host index 1 is also hosts[0]'s"},
      {"{\"version\": 1, \"hosts\": [\n{\"name\": \"*\"},\n{\"name\": \"*\"}]}",
       "x.json:3: hosts[1].name: * is also hosts[0]'s name"},
      {"{\"version\": 1, \"hosts\": [\n{\"name\": \"a\", \"cores\": -4}]}",
       "x.json:2: hosts[0].cores: expected an integer from 0 to 1048576, got -4"},
      {"{\"version\": 1, \"hosts\": [\n{\"name\": \"a\", \"gpus\": [\n{\"numa\": 0}]}]}",
       "x.json:3: hosts[0].gpus[0].pci: required member is missing"},
      {"{\"version\": 1, \"hosts\": [\n{\"name\": \"a\", \"gpus\": [\n{\"pci\": \"34:00.0\"}]}]}",
       "x.json:3: hosts[0].gpus[0].pci: expected a PCI bus id like \"0000:34:00.0\", got \"34:00.0\""},
      {"{\"version\": 1, \"hosts\": [\n{\"name\": \"a\", \"gpus\": [\n{\"pci\": \"0000:34:00.0\"},\n{\"pci\": \"0000:34:00.0\"}]}]}",
       "x.json:4: hosts[0].gpus[1].pci: 0000:34:00.0 is also hosts[0].gpus[0]'s"},
      {"{\"version\": 1, \"hosts\": [\n{\"name\": \"a\", \"gpus\": [\n{\"pci\": \"0000:34:00.0\", \"nic\": \"mlx5_9:1\"}]}]}",
       "x.json:3: hosts[0].gpus[0].nic: no NIC named mlx5_9:1 in this host's nics"},
      {nic_with("port", "0"), "x.json:4: hosts[0].nics[0].port: expected an integer from 1 to 255, got 0"},
      {nic_with("speed_gbps", "\"100G\""),
       "x.json:4: hosts[0].nics[0].speed_gbps: expected a number from 0 to 4000000, got a string"},
      {nic_with("speed_gbps", "4000001"),
       "x.json:4: hosts[0].nics[0].speed_gbps: expected a number from 0 to 4000000, got 4000001"},
      {nic_with("link_layer", "\"roce\""),
       "x.json:4: hosts[0].nics[0].link_layer: expected one of infiniband, ethernet, unknown, got \"roce\""},
      {nic_with("state", "true"), "x.json:4: hosts[0].nics[0].state: expected a string, got a boolean"},
      {nic_with("state", "\"active\""),
       "x.json:4: hosts[0].nics[0].state: expected one of up, down, unknown, got \"active\""},
      {nic_with("gpu_path", "\"pix\""),
       "x.json:4: hosts[0].nics[0].gpu_path: expected one of switch, host_bridge, socket, system, unknown, got \"pix\""},
      {nic_with("gpu_path", "\"switch\""), "x.json:4: hosts[0].nics[0].gpu_path: a path needs a nearest_gpu"},
      {nic_with("nearest_gpu", "\"0000:34:00.0\""),
       "x.json:4: hosts[0].nics[0].nearest_gpu: no GPU 0000:34:00.0 in this host's gpus"},
      {nic_with("rail", "1024"), "x.json:4: hosts[0].nics[0].rail: expected an integer from 0 to 1023, got 1024"},
      {nic_with("rail", "1e2"), "x.json:4: hosts[0].nics[0].rail: expected an integer from 0 to 1023, got 1e2"},
      {nic_with("numa", "{}"), "x.json:4: hosts[0].nics[0].numa: expected an integer from 0 to 1048575, got an object"},
      {nic_with("netdev", "\"ib 0\""), "x.json:4: hosts[0].nics[0].netdev: expected a name of 1 to 64"},
      {nic_with("pci", "\"0000:3b:20.0\""), "x.json:4: hosts[0].nics[0].pci: expected a PCI bus id"},
      {nic_with("colour", "1"), "x.json:4: hosts[0].nics[0].colour: unknown member"},
      {nic_with("\\u0001", "1"), "x.json:4: hosts[0].nics[0].\"\\u0001\": unknown member"},
      {"{\"version\": 1, \"hosts\": [\n{\"name\": \"a\", \"nics\": [\n{\"name\": \"eth0\", \"port\": 1}]}]}",
       "x.json:3: hosts[0].nics[0].port: a port needs an rdma_device"},
      {"{\"version\": 1, \"hosts\": [\n{\"name\": \"a\", \"nics\": [\n{\"name\": \"a\", \"rail\": 0},\n{\"name\": \"b\", \"rail\": 0}]}]}",
       "x.json:4: hosts[0].nics[1].rail: rail 0 is also hosts[0].nics[0]'s"},
      {"{\"version\": 1, \"hosts\": [\n{\"name\": \"a\", \"nics\": [\n{\"name\": \"a\"},\n{\"name\": \"a\"}]}]}",
       "x.json:4: hosts[0].nics[1].name: a is also hosts[0].nics[0]'s name"},
      // tuning
      {"{\"version\": 1, \"tuning\": {}}", "x.json:1: tuning: expected an array, got an object"},
      {tuning_with("algorithm", "\"\""), "x.json:3: tuning[0].algorithm: expected a name of 1 to 64"},
      {"{\"version\": 1, \"tuning\": [\n{\"collective\": \"allreduce\", \"min_bytes\": 0, \"max_bytes\": 8}]}",
       "x.json:2: tuning[0].algorithm: required member is missing"},
      {tuning_with("min_bytes", "-1"),
       "x.json:3: tuning[0].min_bytes: expected an integer from 0 to 1125899906842624, got -1"},
      {tuning_with("max_bytes", "512"),
       "x.json:3: tuning[0].max_bytes: expected an integer from 1024 to 1125899906842624, got 512"},
      {tuning_with("max_bytes", "1.5e3"), "x.json:3: tuning[0].max_bytes: expected an integer from 1024"},
      {tuning_with("hosts", "0"), "x.json:3: tuning[0].hosts: expected an integer from 1 to 1048576, got 0"},
      {tuning_with("ranks", "2, \"hosts\": 4"),
       "x.json:3: tuning[0].ranks: expected an integer from 4 to 67108864, got 2"},
      {tuning_with("nranks", "8"),
       "x.json:3: tuning[0].nranks: unknown member (expected one of collective, algorithm, min_bytes, max_bytes, hosts, ranks)"},
      // syntax: line and column
      {"{\"version\": 1,\n\"tiers\": [\n{\"name\": \"ib\" \"bandwidth_gbps\": 1}]}",
       "x.json:3:15: expected ',' or '}' after an object member"},
      {"{\"version\": 1,,}", "x.json:1:15: expected a member name in double quotes"},
      {"{\"version\": 1", "x.json:1:14: expected ',' or '}' after an object member"},
      {std::string("{\"version\": 1, \"tiers\": ") + std::string(100, '[') + std::string(100, ']') + "}",
       "x.json:1:88: nesting deeper than 64 levels"},
  };
  std::string seventeen_tiers = "{\"version\": 1,\n\"tiers\": [";
  for (int t = 0; t < 17; ++t)
    seventeen_tiers += std::string(t ? "," : "") + "{\"name\": \"t" + std::to_string(t) +
                       "\", \"bandwidth_gbps\": 1, \"latency_us\": 1, \"groups\": [{\"hosts\": [0]}]}";
  const ErrorCase bounds[] = {{seventeen_tiers + "]}", "x.json:2: tiers: more than 16 tiers"}};
  for (const ErrorCase& c : bounds)
    EXPECT_EQ(parse_error(c.text).rfind("topology file " + c.expected, 0), 0u) << parse_error(c.text);
  for (const ErrorCase& c : cases) {
    EXPECT_EQ(parse_error(c.text).rfind("topology file " + c.expected, 0), 0u)
        << "input:\n"
        << c.text << "\nmessage: " << parse_error(c.text) << "\nexpected: " << c.expected;
  }
}

TEST(TopologyFile, FileProblems) {
  EXPECT_NE(std::string(parse_error(std::string(kMaxTopologyFileBytes + 1, ' '))).find("larger than 16 MiB"),
            std::string::npos);
  try {
    load_topology_file(fixture("files/missing.json"));
    FAIL();
  } catch (const dc::Error& e) {
    EXPECT_EQ(std::string(e.what()), "topology file " + fixture("files/missing.json") + ": cannot open it");
  }
}

TEST(TopologyFile, EnvironmentNamesTheFile) {
  {
    ScopedEnv unset("DEEPCOMM_TOPO_FILE", std::nullopt);
    EXPECT_FALSE(load_topology_file_from_env());
  }
  ScopedEnv set("DEEPCOMM_TOPO_FILE", fixture("files/two-tier.json"));
  const auto file = load_topology_file_from_env();
  ASSERT_TRUE(file);
  EXPECT_EQ(file->source, fixture("files/two-tier.json"));
  EXPECT_EQ(file->tiers.size(), 2u);
}

NodeSummary two_nic_node() {
  NodeSummary node;
  node.host = "gpu003";
  node.gpus = {{"0000:34:00.0", 0, 0}, {"0000:36:00.0", 0, 1}};
  node.nics = {{"mlx5_0:1", "mlx5_0", 1, "ib0", "0000:35:00.0", LinkLayer::InfiniBand, LinkState::Up, 100000, 0, 0,
                NicPath::SameSwitch, 0},
               {"mlx5_1:1", "mlx5_1", 1, "ib1", "0000:35:00.1", LinkLayer::InfiniBand, LinkState::Up, 100000, 0, 1,
                NicPath::SameSwitch, 1}};
  return node;
}

TEST(ApplyHostEntry, RailsAndSpeedsFromTheFile) {
  const TopologyFile file = load_topology_file(fixture("files/two-tier.json"));
  NodeSummary node = two_nic_node();
  apply_host_entry(node, *find_host_entry(file, node.host, 2), file.source);
  EXPECT_EQ(node.nics[0].rail, 1);
  EXPECT_EQ(node.nics[1].rail, 0);
  EXPECT_EQ(node.nics[1].speed_mbps, 200000u);
  EXPECT_EQ(node.nics[0].speed_mbps, 100000u);  // not given: as detected
  EXPECT_EQ(check_summary(node), "");
}

TEST(ApplyHostEntry, GivenRailsReplaceAllDetectedOnes) {
  const TopologyFile file = parse_topology_file(
      "{\"version\": 1, \"hosts\": [{\"name\": \"gpu003\", \"nics\": [{\"name\": \"mlx5_1:1\", \"rail\": 0}]}]}",
      "r.json");
  NodeSummary node = two_nic_node();
  apply_host_entry(node, file.hosts[0], file.source);
  EXPECT_EQ(node.nics[0].rail, -1);
  EXPECT_EQ(node.nics[1].rail, 0);
}

TEST(ApplyHostEntry, UnknownDevicesAreErrorsWithTheirLine) {
  const TopologyFile file = parse_topology_file(
      "{\"version\": 1, \"hosts\": [\n{\"index\": 3,\n\"gpus\": [{\"pci\": \"0000:99:00.0\"}],\n\"nics\": [\n{\"name\": "
      "\"mlx5_0:1\"},\n{\"name\": \"mlx5_7:1\", \"rail\": 3}]}]}",
      "u.json");
  NodeSummary node = two_nic_node();
  const NodeSummary before = node;
  try {
    apply_host_entry(node, *find_host_entry(file, "elsewhere", 3), file.source);
    FAIL();
  } catch (const dc::Error& e) {
    EXPECT_EQ(std::string(e.what()), "topology file u.json:6: host gpu003 has no NIC mlx5_7:1");
  }
  EXPECT_EQ(node, before);
  const TopologyFile gpus_only = parse_topology_file(
      "{\"version\": 1, \"hosts\": [\n{\"name\": \"*\",\n\"gpus\": [{\"pci\": \"0000:99:00.0\"}]}]}", "g.json");
  try {
    apply_host_entry(node, gpus_only.hosts[0], gpus_only.source);
    FAIL();
  } catch (const dc::Error& e) {
    EXPECT_EQ(std::string(e.what()), "topology file g.json:3: host gpu003 has no GPU 0000:99:00.0");
  }
}

TEST(FindHostEntry, NameThenIndexThenAnyHost) {
  const TopologyFile file = parse_topology_file(
      "{\"version\": 1, \"hosts\": [{\"name\": \"*\"}, {\"index\": 2}, {\"name\": \"b\"}]}", "f.json");
  EXPECT_EQ(find_host_entry(file, "b", 2), &file.hosts[2]);
  EXPECT_EQ(find_host_entry(file, "a", 2), &file.hosts[1]);
  EXPECT_EQ(find_host_entry(file, "a", 0), &file.hosts[0]);
  const TopologyFile none = parse_topology_file("{\"version\": 1}", "n.json");
  EXPECT_EQ(find_host_entry(none, "a", 0), nullptr);
}

}  // namespace
}  // namespace dc::topo::test
