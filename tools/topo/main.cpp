// deepcomm-topo: what DeepComm sees and what it would do. Prints the detected machine (the live
// one, or an hwloc export with --xml), the cluster view of a layout of hosts and ranks, and, for a
// range of sizes, each collective's chosen plan with its predicted time and the runner-up.
//
//   deepcomm-topo [--xml FILE] [--topo-file FILE] [--hosts H] [--ranks-per-host R] [--sockets] [-b MIN] [-e MAX]
//                 [-f FACTOR] [--json] [--compress SPEC]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/error.h"
#include "src/plan/select.h"
#include "tools/common/options.h"
#include "tools/topo/plan_table.h"
#include "topology/detect.h"

namespace {

const char* const kUsage =
    "usage: deepcomm-topo [--xml FILE] [--topo-file FILE] [--hosts H] [--ranks-per-host R] [--sockets]\n"
    "                     [-b MIN_BYTES] [-e MAX_BYTES] [-f FACTOR] [--json] [--compress SPEC]\n"
    "  --xml FILE          describe the machine of an hwloc XML export instead of this one\n"
    "  --topo-file FILE    price the layout with the network tiers, groups and rails of this topology\n"
    "                      file (docs/topology-file.md)\n"
    "  --hosts H           hosts in the layout priced (default: the hosts the file names, else 1)\n"
    "  --ranks-per-host R  ranks on each host, block placement (default 8)\n"
    "  --sockets           ranks of one host talk over sockets (DEEPCOMM_TRANSPORT=tcp)\n"
    "  -b, -e, -f          sizes in bytes: from MIN to MAX, times FACTOR (default 8, 1G, 4)\n"
    "  --json              print one JSON object instead of text\n"
    "  --compress SPEC     price all-reduces compressed with SPEC (e.g. topk:0.001,q8,huffman,ef)\n";

}  // namespace

int main(int argc, char** argv) {
  using dc::tools::parse_count;
  using dc::tools::parse_size;
  dc::tools::TableOptions options;
  dc::topo::DetectOptions detect;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      auto value = [&]() -> const char* {
        if (i + 1 >= argc) dc::fail(dcInvalidArgument, arg + " needs a value");
        return argv[++i];
      };
      if (arg == "--xml") detect.xml_path = value();
      else if (arg == "--topo-file") options.layout.file = dc::topo::load_topology_file(value());
      else if (arg == "--hosts") options.layout.hosts = parse_count(arg, value(), dc::tools::kMaxSimulatedHosts);
      else if (arg == "--ranks-per-host")
        options.layout.ranks_per_host = parse_count(arg, value(), dc::tools::kMaxRanksPerHost);
      else if (arg == "--sockets") options.layout.shared_memory = false;
      else if (arg == "-b") options.min_bytes = parse_size(arg, value());
      else if (arg == "-e") options.max_bytes = parse_size(arg, value());
      else if (arg == "-f") options.factor = parse_size(arg, value());
      else if (arg == "--json") options.json = true;
      else if (arg == "--compress") options.compress = dc::compression::parse_spec(value());
      else if (arg == "-h" || arg == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      } else {
        dc::fail(dcInvalidArgument, "unknown option " + arg);
      }
    }
    if (options.layout.hosts == 0 && !options.layout.file) options.layout.hosts = 1;
    if (options.factor < 2) dc::fail(dcInvalidArgument, "-f must be at least 2");
    const dc::topo::NodeTopology node = dc::topo::detect_node(detect);
    std::fputs(dc::tools::report(node, options).c_str(), stdout);
    return 0;
  } catch (const dc::Error& e) {
    std::fprintf(stderr, "deepcomm-topo: %s\n%s", e.what(), kUsage);
    return 2;
  }
}
