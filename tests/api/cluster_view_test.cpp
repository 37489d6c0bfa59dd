// The cluster view at init: the topology file's tiers reach the cost model (and a split child's
// view), ranks must agree on the file's content, a bad file fails init naming its line, and
// DEEPCOMM_TOPO_DUMP_FILE writes what was detected. Hosts are faked with DEEPCOMM_HOST_ID.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "tests/support/collective_check.h"
#include "topology/topology_file.h"

namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// One 1 Gbit/s tier between every host.
const char* kSlowTier = R"({"version": 1, "tiers": [{"name": "slow", "bandwidth_gbps": 1, "latency_us": 100}]})";

// The predicted time of a 64 MiB float32 all-reduce and its algorithm, from the plan's JSON.
std::pair<std::string, double> predicted(dcComm_t comm) {
  size_t len = 0;
  dcCommPlanJson(comm, dcCollAllReduce, 16 << 20, dcFloat32, -1, nullptr, &len);
  std::vector<char> json(len);
  if (dcCommPlanJson(comm, dcCollAllReduce, 16 << 20, dcFloat32, -1, json.data(), &len) != dcSuccess) return {"", 0};
  const std::string text(json.data());
  const size_t a = text.find("\"algorithm\":\"") + 13;
  const size_t p = text.find("\"predicted_seconds\":") + 20;
  return {text.substr(a, text.find('"', a) - a), std::atof(text.c_str() + p)};
}

TEST(ClusterViewAtInit, TopologyFileReachesTheCostModelAndSplitChildren) {
  const std::string file = write_file("slow.json", kSlowTier);
  const std::string dump = ::testing::TempDir() + "/dump.json";
  std::remove(dump.c_str());
  const std::string errors = dctest::run_as_processes(
      4, {{"DEEPCOMM_TOPO_FILE", file}, {"DEEPCOMM_TOPO_DUMP_FILE", dump}},
      [](int rank, int n, const dcUniqueId& id) {
        setenv("DEEPCOMM_HOST_ID", rank < 2 ? "host-a" : "host-b", 1);
        dcComm_t comm = nullptr;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcSuccess) return 2;
        // 2 hosts x 2 ranks: hierarchical, each host link carrying 64 MiB at 1 Gbit/s (~0.54 s;
        // the default 10 Gbit/s tier would give a tenth of that).
        const auto [algorithm, seconds] = predicted(comm);
        if (algorithm != "hierarchical") return 3;
        if (seconds < 0.5 || seconds > 0.7) return 4;
        // A child of ranks 0 and 2 spans both hosts over the same tier: one rank per host.
        dcComm_t child = nullptr;
        if (dcCommSplit(comm, rank % 2, rank, &child, nullptr) != dcSuccess) return 5;
        const auto [child_algorithm, child_seconds] = predicted(child);
        if (child_algorithm == "hierarchical" || child_seconds < 0.5) return 6;
        dcCommDestroy(child);
        dcCommDestroy(comm);
        return 0;
      },
      60);
  EXPECT_EQ(errors, "");
  // Rank 0 wrote both hosts (by index) and the file's tier; it loads back.
  const dc::topo::TopologyFile written = dc::topo::load_topology_file(dump);
  ASSERT_EQ(written.tiers.size(), 1u);
  EXPECT_EQ(written.tiers[0].name, "slow");
  EXPECT_EQ(written.tiers[0].bandwidth_gbps, 1);
  ASSERT_EQ(written.hosts.size(), 2u);
  EXPECT_EQ(written.hosts[1].index, 1);
  EXPECT_FALSE(written.hosts[0].node.host.empty() && written.hosts[0].node.nics.empty());
}

TEST(ClusterViewAtInit, RanksMustAgreeOnTheFilesContent) {
  const std::string slow = write_file("slow.json", kSlowTier);
  const std::string same = write_file("same-content.json", kSlowTier);
  const std::string other = write_file(
      "other.json", R"({"version": 1, "tiers": [{"name": "slow", "bandwidth_gbps": 2, "latency_us": 100}]})");
  for (const auto& [last, agree] : {std::pair{same, true}, std::pair{other, false}}) {
    const std::string errors = dctest::run_as_processes(
        3, {{"DEEPCOMM_TOPO_FILE", slow}},
        [&, last = last, agree = agree](int rank, int n, const dcUniqueId& id) {
          if (rank == n - 1) setenv("DEEPCOMM_TOPO_FILE", last.c_str(), 1);
          dcComm_t comm = nullptr;
          const dcResult_t result = dcCommInitRank(&comm, n, &id, rank, nullptr);
          if (agree) return result == dcSuccess && dcCommDestroy(comm) == dcSuccess ? 0 : 2;
          if (result != dcInvalidUsage || comm) return 3;
          return std::string(dcGetLastError()).find("DEEPCOMM_TOPO_FILE") == std::string::npos ? 4 : 0;
        },
        60);
    EXPECT_EQ(errors, "") << last;
  }
}

TEST(ClusterViewAtInit, ABadFileFailsInitNamingItsLine) {
  const std::string bad = write_file("bad.json", "{\"version\": 1,\n \"tiers\": [{\"name\": \"x\"}]}");
  const std::string errors = dctest::run_as_processes(
      2, {{"DEEPCOMM_TOPO_FILE", bad}},
      [&](int rank, int n, const dcUniqueId& id) {
        dcComm_t comm = nullptr;
        if (dcCommInitRank(&comm, n, &id, rank, nullptr) != dcInvalidArgument) return 2;
        return std::string(dcGetLastError()).find("bad.json:2: tiers[0].bandwidth_gbps") == std::string::npos ? 3 : 0;
      },
      60);
  EXPECT_EQ(errors, "");
}

}  // namespace
