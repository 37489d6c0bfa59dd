// deepcomm-calibrate: measures α and β of every tier of the running cluster and writes them into
// the topology file format (docs/topology-file.md, "Calibration"). One rank per process, started by
// deepcomm-run; every rank takes part (the pair measuring a tier ping-pongs, the others wait in the
// all-reduce that then shares the pair's times), rank 0 fits, prints the table and writes the file.
//
//   deepcomm-run -n N [--netns ...] deepcomm-calibrate [-o FILE] [-b MIN] [-e MAX] [-f FACTOR]
//                                                      [--reps N] [--seconds S]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/error.h"
#include "src/core/communicator.h"
#include "tools/calibrate/calibration_report.h"
#include "tools/calibrate/ping_pong.h"

namespace {

using dc::calibrate::TierResult;

const char* const kUsage =
    "usage: deepcomm-run -n N [...] deepcomm-calibrate [-o FILE] [-b MIN] [-e MAX] [-f FACTOR]\n"
    "                                                  [--reps N] [--seconds S]\n"
    "  -o FILE       write the cluster's topology file with each network tier's calibration\n"
    "  -b, -e, -f    message sizes in bytes: from MIN to MAX, times FACTOR (default 8, 16M, 2)\n"
    "  --reps N      timed round trips per size, after one untimed (default 5; the median counts)\n"
    "  --seconds S   time budget per tier; larger sizes are skipped past it (default 20)\n";

struct Options {
  std::string output;
  uint64_t min_bytes = 8, max_bytes = 16 << 20, factor = 2;
  int reps = 5;
  int seconds = 20;
};

uint64_t parse_count(const std::string& flag, const char* text, uint64_t limit) {
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  uint64_t scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1ull << 10;
  if (*end == 'M' || *end == 'm') scale = 1ull << 20;
  if (*end == 'G' || *end == 'g') scale = 1ull << 30;
  const bool suffix_ok = scale == 1 ? *end == '\0' : end[1] == '\0';
  if (end == text || text[0] == '-' || !suffix_ok || value == 0 || value > limit / scale)
    dc::fail(dcInvalidArgument,
             flag + " needs a positive number up to " + std::to_string(limit) + ", got \"" + text + "\"");
  return value * scale;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) dc::fail(dcInvalidArgument, arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-o") o.output = value();
    else if (arg == "-b") o.min_bytes = parse_count(arg, value(), 1ull << 30);
    else if (arg == "-e") o.max_bytes = parse_count(arg, value(), 1ull << 30);
    else if (arg == "-f") o.factor = parse_count(arg, value(), 1024);
    else if (arg == "--reps") o.reps = static_cast<int>(parse_count(arg, value(), 1000));
    else if (arg == "--seconds") o.seconds = static_cast<int>(parse_count(arg, value(), 3600));
    else dc::fail(dcInvalidArgument, "unknown argument \"" + arg + "\"");
  }
  if (o.factor < 2) dc::fail(dcInvalidArgument, "-f needs a factor of at least 2");
  if (o.min_bytes >= o.max_bytes) dc::fail(dcInvalidArgument, "-b must be below -e (two sizes at least)");
  return o;
}

std::vector<size_t> sizes_of(const Options& o) {
  std::vector<size_t> sizes;
  for (uint64_t s = o.min_bytes; s <= o.max_bytes; s *= o.factor) sizes.push_back(s);
  return sizes;
}

// Empty when rank 0 can write the output file (or none is asked for), else why not.
std::string output_problem(const std::string& path) {
  if (path.empty()) return "";
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) return path + " is a directory";
  const fs::path parent = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  const bool ok = fs::exists(path, ec) ? access(path.c_str(), W_OK) == 0 : access(parent.c_str(), W_OK) == 0;
  return ok ? ""
            : "cannot write " + path + " (" +
                  std::string(fs::exists(parent, ec) ? "permission denied" : "no such directory") + ")";
}

void check(dcResult_t result, const char* what) {
  if (result != dcSuccess) dc::fail(result, std::string(what) + ": " + dcGetLastError());
}

// Every rank: true when all ranks pass ok (an all-reduce, so also a barrier).
bool all_ok(dcComm_t comm, bool ok) {
  int bad = ok ? 0 : 1;
  check(dcAllReduce(&bad, &bad, 1, dcInt32, dcSum, comm, nullptr), "agreeing on the output");
  return bad == 0;
}

TierResult measure(dcComm_t comm, int rank, const dc::calibrate::TierPair& pair, const Options& o) {
  const std::vector<size_t> sizes = sizes_of(o);
  std::vector<double> seconds(sizes.size(), 0);
  if (rank == pair.leader || rank == pair.follower) {
    const dc::calibrate::PingPongPlan plan{sizes, o.reps, std::chrono::seconds(o.seconds)};
    const auto points = dc::calibrate::ping_pong(comm, rank, pair.leader, pair.follower, plan);
    for (size_t i = 0; i < points.size(); ++i) seconds[i] = points[i].seconds;
  }
  // The leader's times to every rank; the others wait here meanwhile.
  check(dcAllReduce(seconds.data(), seconds.data(), seconds.size(), dcFloat64, dcSum, comm, nullptr),
        "sharing the times");
  std::vector<dc::calibrate::FitPoint> points;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (seconds[i] > 0) points.push_back({static_cast<double>(sizes[i]), seconds[i]});
  return {pair, static_cast<int>(points.size()), dc::calibrate::fit_alpha_beta(points)};
}

int calibrate(dcComm_t comm, const Options& o) {
  int rank = 0, nranks = 0;
  check(dcCommRank(comm, &rank), "rank");
  check(dcCommCount(comm, &nranks), "rank count");
  if (nranks < 2) {
    std::fprintf(stderr, "deepcomm-calibrate: needs at least 2 ranks (a pair per tier), got 1\n");
    return 2;
  }
  const std::string problem = rank == 0 ? output_problem(o.output) : "";
  if (!problem.empty()) std::fprintf(stderr, "deepcomm-calibrate: %s\n", problem.c_str());
  if (!all_ok(comm, problem.empty())) return 1;
  if (static_cast<int64_t>(o.seconds) * 1000 * 2 > comm->config.timeout_ms) {
    if (rank == 0)
      std::fprintf(stderr, "deepcomm-calibrate: --seconds %d must be at most half of DEEPCOMM_TIMEOUT (%d s)\n",
                   o.seconds, comm->config.timeout_ms / 1000);
    return 2;
  }

  const dc::ClusterView& view = *comm->cluster;
  std::vector<TierResult> results;
  for (const dc::calibrate::TierPair& pair : dc::calibrate::tier_pairs(view))
    results.push_back(pair.leader < 0 ? TierResult{pair, 0, std::nullopt} : measure(comm, rank, pair, o));
  if (rank != 0) return 0;

  std::printf("# deepcomm-calibrate: %d ranks on %d hosts; time = alpha + beta * bytes, one way\n", nranks,
              view.nhosts());
  std::fputs(dc::calibrate::format_table(results).c_str(), stdout);
  const int planned = static_cast<int>(sizes_of(o).size());
  for (const TierResult& r : results)
    if (r.sizes > 0 && r.sizes < planned)
      std::printf("# %s: --seconds stopped the sizes at %zu bytes; beta may be short of the sustained rate\n",
                  r.pair.name.c_str(), sizes_of(o)[r.sizes - 1]);
  if (view.nhosts() < 2)
    std::printf("# one host only: no network tier measured; the file holds only the tiers measured\n");
  std::printf("# the tier inside a host is printed only: the topology file has no place for it\n");
  if (!o.output.empty()) {
    const bool from_file = comm->config.topology_file != nullptr;
    dc::topo::dump_topology_file(dc::calibrate::calibrated_file(view, results, from_file), o.output);
    std::printf("# wrote %s\n", o.output.c_str());
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  try {
    options = parse_options(argc, argv);
  } catch (const dc::Error& e) {
    std::fprintf(stderr, "deepcomm-calibrate: %s\n%s", e.what(), kUsage);
    return 2;
  }
  dcComm_t comm = nullptr;
  if (dcCommInitFromEnv(&comm, nullptr) != dcSuccess) {
    std::fprintf(stderr, "deepcomm-calibrate: cannot start a communicator (run it under deepcomm-run): %s\n",
                 dcGetLastError());
    return 1;
  }
  try {
    const int status = calibrate(comm, options);
    dcCommDestroy(comm);
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deepcomm-calibrate: %s\n", e.what());
    dcCommAbort(comm);
    return 1;
  }
}
