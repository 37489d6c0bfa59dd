// deepcomm-topo: what DeepComm sees and what it would do. Prints the detected machine (the live
// one, or an hwloc export with --xml), the cluster view of a layout of hosts and ranks, and, for a
// range of sizes, each collective's chosen plan with its predicted time and the runner-up.
//
//   deepcomm-topo [--xml FILE] [--hosts H] [--ranks-per-host R] [--sockets] [-b MIN] [-e MAX]
//                 [-f FACTOR] [--json] [--compress SPEC]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "src/base/error.h"
#include "src/plan/select.h"
#include "topology/detect.h"
#include "tools/topo/plan_table.h"

namespace {

const char* const kUsage =
    "usage: deepcomm-topo [--xml FILE] [--hosts H] [--ranks-per-host R] [--sockets]\n"
    "                     [-b MIN_BYTES] [-e MAX_BYTES] [-f FACTOR] [--json] [--compress SPEC]\n"
    "  --xml FILE          describe the machine of an hwloc XML export instead of this one\n"
    "  --hosts H           hosts in the layout priced (default 1)\n"
    "  --ranks-per-host R  ranks on each host, block placement (default 8)\n"
    "  --sockets           ranks of one host talk over sockets (DEEPCOMM_TRANSPORT=tcp)\n"
    "  -b, -e, -f          sizes in bytes: from MIN to MAX, times FACTOR (default 8, 1G, 4)\n"
    "  --json              print one JSON object instead of text\n"
    "  --compress SPEC     price all-reduces compressed with SPEC (e.g. topk:0.001,q8,huffman,ef)\n";

uint64_t parse_size(const std::string& flag, const char* text) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  uint64_t scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1ull << 10;
  if (*end == 'M' || *end == 'm') scale = 1ull << 20;
  if (*end == 'G' || *end == 'g') scale = 1ull << 30;
  if (end == text || (scale != 1 && end[1] != '\0') || (scale == 1 && *end != '\0') || value == 0)
    dc::fail(dcInvalidArgument, flag + " needs a positive size, got \"" + text + "\"");
  return value * scale;
}

}  // namespace

int main(int argc, char** argv) {
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
      else if (arg == "--hosts") options.hosts = static_cast<int>(parse_size(arg, value()));
      else if (arg == "--ranks-per-host") options.ranks_per_host = static_cast<int>(parse_size(arg, value()));
      else if (arg == "--sockets") options.shared_memory = false;
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
    if (options.factor < 2) dc::fail(dcInvalidArgument, "-f must be at least 2");
    const dc::topo::NodeTopology node = dc::topo::detect_node(detect);
    std::fputs(dc::tools::report(node, options).c_str(), stdout);
    return 0;
  } catch (const dc::Error& e) {
    std::fprintf(stderr, "deepcomm-topo: %s\n%s", e.what(), kUsage);
    return 2;
  }
}
