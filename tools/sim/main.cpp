// deepcomm-sim: what the cost model predicts for collectives on a cluster far larger than this
// machine (up to 4096 hosts x 8 ranks), from the generators' analytical traffic: per collective
// and size, every applicable algorithm's predicted time, the selector's choice marked.
//
//   deepcomm-sim [--topo-file FILE] [--hosts H] [--ranks-per-host R] [--collective NAME]
//                [-b MIN] [-e MAX] [-f FACTOR] [--check] [--json]
#include <cstdio>
#include <exception>
#include <string>

#include "base/error.h"
#include "tools/common/file_cluster.h"
#include "tools/common/options.h"
#include "tools/sim/sim_report.h"
#include "tools/sim/sim_rows.h"

namespace {

const char* const kUsage =
    "usage: deepcomm-sim [--topo-file FILE] [--hosts H] [--ranks-per-host R] [--collective NAME]\n"
    "                    [-b MIN_BYTES] [-e MAX_BYTES] [-f FACTOR] [--check] [--json]\n"
    "  --topo-file FILE    network tiers, groups and rails of the cluster (docs/topology-file.md)\n"
    "  --hosts H           hosts, 1-4096 (default: the hosts the file names)\n"
    "  --ranks-per-host R  ranks on each host, 1-8, block placement (default 8)\n"
    "  --collective NAME   all_reduce (default), all_gather, reduce_scatter, broadcast, reduce,\n"
    "                      alltoall, gather, scatter, or all\n"
    "  -b, -e, -f          sizes in bytes: from MIN to MAX, times FACTOR (default 4, 1G, 4)\n"
    "  --check             also price every rank's materialized plans (at most 64 ranks)\n"
    "  --json              print one JSON object instead of text\n";

struct Named {
  const char* name;
  dcCollective_t collective;
};
const Named kCollectives[] = {
    {"all_reduce", dcCollAllReduce}, {"all_gather", dcCollAllGather}, {"reduce_scatter", dcCollReduceScatter},
    {"broadcast", dcCollBroadcast},  {"reduce", dcCollReduce},        {"alltoall", dcCollAlltoAll},
    {"gather", dcCollGather},        {"scatter", dcCollScatter}};

std::vector<dcCollective_t> parse_collective(const std::string& name) {
  std::vector<dcCollective_t> out;
  for (const Named& c : kCollectives)
    if (name == "all" || name == c.name) out.push_back(c.collective);
  if (out.empty()) dc::fail(dcInvalidArgument, "unknown collective \"" + name + "\"");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using dc::tools::parse_count;
  using dc::tools::parse_size;
  dc::tools::Layout layout;
  dc::tools::SimOptions options;
  bool json = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      auto value = [&]() -> const char* {
        if (i + 1 >= argc) dc::fail(dcInvalidArgument, arg + " needs a value");
        return argv[++i];
      };
      if (arg == "--topo-file") layout.file = dc::topo::load_topology_file(value());
      else if (arg == "--hosts") layout.hosts = parse_count(arg, value(), dc::tools::kMaxSimulatedHosts);
      else if (arg == "--ranks-per-host")
        layout.ranks_per_host = parse_count(arg, value(), dc::tools::kMaxRanksPerHost);
      else if (arg == "--collective") options.collectives = parse_collective(value());
      else if (arg == "-b") options.min_bytes = parse_size(arg, value());
      else if (arg == "-e") options.max_bytes = parse_size(arg, value());
      else if (arg == "-f") options.factor = parse_size(arg, value());
      else if (arg == "--check") options.check = true;
      else if (arg == "--json") json = true;
      else if (arg == "-h" || arg == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      } else {
        dc::fail(dcInvalidArgument, "unknown option " + arg);
      }
    }
    if (options.factor < 2) dc::fail(dcInvalidArgument, "-f must be at least 2");
    if (options.min_bytes > options.max_bytes) dc::fail(dcInvalidArgument, "-b is larger than -e");
    const auto cluster = dc::tools::simulated_cluster(layout);
    const auto rows = dc::tools::simulate(cluster, options);
    std::fputs(dc::tools::sim_report(*cluster, layout.file ? layout.file->source : "", rows, json).c_str(), stdout);
    return 0;
  } catch (const dc::Error& e) {
    std::fprintf(stderr, "deepcomm-sim: %s\n%s", e.what(), kUsage);
    return 2;
  } catch (const std::exception& e) {  // out of memory, or a bug: still a message, not an abort
    std::fprintf(stderr, "deepcomm-sim: %s\n", e.what());
    return 1;
  }
}
