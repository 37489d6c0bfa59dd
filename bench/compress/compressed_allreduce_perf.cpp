// A compressed all-reduce against the dense ones, side by side in one run (BENCHMARKING.md): per
// pair of rounds, each dense algorithm (its own communicator, made with DEEPCOMM_ALGO set) then
// the compressed call, each timed over --iters calls after --warmup, wall time per call averaged
// over the ranks. Reports per round and the medians: time per call, the bytes a rank sent per call
// (transport counters), the wire ratio (dense bytes / compressed bytes) and the compressed call's
// breakdown from its statistics (selection, encode, decode, accumulate, the rest: wire and
// waiting). Start it with deepcomm-run; every rank reads its own gradient (--input with %d, the
// rank) or generates one.
//
//   deepcomm-run -n 2 compressed_allreduce_perf --input /tmp/grad/mlp_step%d.f32 \
//       --spec topk:0.001,q8,huffman,ef --dense ring,tree --pairs 5
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"

namespace {

struct Options {
  std::string input, spec = "topk:0.001,q8,huffman,ef";
  std::vector<std::string> dense = {"ring", "tree"};
  size_t count = 1 << 22;
  int pairs = 5, warmup = 2, iters = 5;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "compressed_allreduce_perf: %s\n"
               "usage: compressed_allreduce_perf [--input FILE (%%d: the rank) | --count N] [--spec SPEC]\n"
               "                                 [--dense ALGO,ALGO...] [--pairs P] [--warmup W] [--iters I]\n",
               why.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at; (at = text.find(',', start)) != std::string::npos; start = at + 1)
    out.push_back(text.substr(start, at - start));
  out.push_back(text.substr(start));
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--input") o.input = v;
    else if (a == "--spec") o.spec = v;
    else if (a == "--dense") o.dense = split(v);
    else if (a == "--count") o.count = std::stoull(v);
    else if (a == "--pairs") o.pairs = std::stoi(v);
    else if (a == "--warmup") o.warmup = std::stoi(v);
    else if (a == "--iters") o.iters = std::stoi(v);
    else usage("unknown option " + a);
  }
  return o;
}

void check(dcResult_t r, const char* what) {
  if (r == dcSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, dcGetLastError());
  std::exit(1);
}

std::vector<float> gradient(const Options& o, int rank) {
  if (o.input.empty()) {
    std::mt19937_64 rng(rank + 1);
    std::normal_distribution<float> normal(0.0f, 1e-3f);
    std::vector<float> v(o.count);
    for (float& x : v) x = normal(rng);
    return v;
  }
  char path[4096];
  std::snprintf(path, sizeof path, o.input.c_str(), rank);
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) usage(std::string("cannot open ") + path);
  std::vector<float> v(size_t(f.tellg()) / 4);
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), std::streamsize(v.size() * 4));
  return v;
}

uint64_t sent(dcComm_t comm) {
  dcCounters_t c{};
  check(dcCommGetCounters(comm, &c), "dcCommGetCounters");
  return c.shmBytesSent + c.tcpBytesSent;
}

double mean_over_ranks(dcComm_t comm, double value) {
  check(dcAllReduce(&value, &value, 1, dcFloat64, dcAvg, comm, nullptr), "averaging a measurement");
  return value;
}

struct Measure {
  double seconds = 0;         // per call, averaged over ranks
  double bytes = 0;           // sent per call, averaged over ranks
  dcCompressStats_t stats{};  // compressed: the sum over the timed calls
};

// Times `iters` calls of `call` after `warmup` of them; every rank starts together.
template <class Call>
Measure timed(dcComm_t comm, const Options& o, Call&& call) {
  for (int i = 0; i < o.warmup; ++i) call(nullptr);
  Measure m;
  int32_t go = 0;
  check(dcAllReduce(&go, &go, 1, dcInt32, dcSum, comm, nullptr), "barrier");
  const uint64_t before = sent(comm);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < o.iters; ++i) {
    dcCompressStats_t s{};
    call(&s);
    m.stats.selectSeconds += s.selectSeconds, m.stats.encodeSeconds += s.encodeSeconds;
    m.stats.decodeSeconds += s.decodeSeconds, m.stats.accumulateSeconds += s.accumulateSeconds;
    m.stats.totalSeconds += s.totalSeconds, m.stats.rawBytes += s.rawBytes, m.stats.wireBytes += s.wireBytes;
    std::memcpy(m.stats.algorithm, s.algorithm, sizeof s.algorithm);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  m.bytes = mean_over_ranks(comm, double(sent(comm) - before) / o.iters);
  m.seconds = mean_over_ranks(comm, seconds / o.iters);
  return m;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  dcComm_t world;
  check(dcCommInitFromEnv(&world, nullptr), "dcCommInitFromEnv");
  int rank = 0, n = 1;
  dcCommRank(world, &rank);
  dcCommCount(world, &n);
  const std::vector<float> grad = gradient(o, rank);
  const size_t count = grad.size();
  // One communicator per dense algorithm: DEEPCOMM_ALGO is read when a communicator is made.
  std::vector<dcComm_t> dense(o.dense.size());
  for (size_t a = 0; a < o.dense.size(); ++a) {
    dcUniqueId id;
    if (rank == 0) check(dcGetUniqueId(&id), "dcGetUniqueId");
    check(dcBroadcast(&id, &id, sizeof id, dcUint8, 0, world, nullptr), "sharing an id");
    setenv("DEEPCOMM_ALGO", o.dense[a].c_str(), 1);
    check(dcCommInitRank(&dense[a], n, &id, rank, nullptr), "dcCommInitRank");
  }
  unsetenv("DEEPCOMM_ALGO");
  dcResidual_t residual = nullptr;
  if (o.spec.find("ef") != std::string::npos) check(dcResidualCreate(&residual, count), "dcResidualCreate");
  std::vector<float> out(count);

  if (rank == 0)
    std::printf(
        "# %d ranks, %zu float32 (%.1f MB) per rank, spec %s; time = wall per call averaged over ranks\n"
        "%-6s %-14s %12s %14s\n",
        n, count, 4e-6 * double(count), o.spec.c_str(), "pair", "plan", "ms/call", "bytes sent/call");
  std::vector<std::vector<double>> dense_ms(o.dense.size());
  std::vector<double> compressed_ms, speedups, ratios, best_dense_bytes;
  double compressed_bytes = 0;
  Measure last;
  for (int pair = 0; pair < o.pairs; ++pair) {
    double best = 1e300, best_bytes = 0;
    for (size_t a = 0; a < o.dense.size(); ++a) {
      const Measure m = timed(dense[a], o, [&](dcCompressStats_t*) {
        check(dcAllReduce(grad.data(), out.data(), count, dcFloat32, dcSum, dense[a], nullptr), "dcAllReduce");
      });
      dense_ms[a].push_back(1e3 * m.seconds);
      if (m.seconds < best) best = m.seconds, best_bytes = m.bytes;
      if (rank == 0) std::printf("%-6d %-14s %12.2f %14.0f\n", pair, o.dense[a].c_str(), 1e3 * m.seconds, m.bytes);
    }
    const Measure m = timed(world, o, [&](dcCompressStats_t* s) {
      check(dcCompressedAllReduce(grad.data(), out.data(), count, dcFloat32, dcSum, o.spec.c_str(), residual, world,
                                  nullptr, s),
            "dcCompressedAllReduce");
    });
    if (rank == 0)
      std::printf("%-6d %-14s %12.2f %14.0f   (%s)\n", pair, "compressed", 1e3 * m.seconds, m.bytes, m.stats.algorithm);
    compressed_ms.push_back(1e3 * m.seconds);
    speedups.push_back(best / m.seconds);
    ratios.push_back(best_bytes / m.bytes);
    compressed_bytes = m.bytes;
    last = m;
  }
  // The breakdown of the last round's compressed calls, per call, averaged over the ranks.
  const double calls = o.iters;
  const double select = mean_over_ranks(world, last.stats.selectSeconds / calls);
  const double encode = mean_over_ranks(world, last.stats.encodeSeconds / calls);
  const double decode = mean_over_ranks(world, last.stats.decodeSeconds / calls);
  const double accumulate = mean_over_ranks(world, last.stats.accumulateSeconds / calls);
  const double total = mean_over_ranks(world, last.stats.totalSeconds / calls);
  const double codec_ratio = mean_over_ranks(world, double(last.stats.rawBytes) / double(last.stats.wireBytes));
  if (rank == 0) {
    std::printf("\n## medians over %d pairs\n", o.pairs);
    for (size_t a = 0; a < o.dense.size(); ++a)
      std::printf("dense %-10s %10.2f ms/call\n", o.dense[a].c_str(), median(dense_ms[a]));
    std::printf("compressed       %10.2f ms/call (%s), %.0f bytes sent per call\n", median(compressed_ms),
                last.stats.algorithm, compressed_bytes);
    std::printf("speedup over the best dense plan: median of pairwise ratios %.1fx\n", median(speedups));
    std::printf("wire ratio (bytes a rank sends dense / compressed): %.0f:1; messages alone %.0f:1\n", median(ratios),
                codec_ratio);
    std::printf(
        "breakdown per call (ms): selection %.2f, encode %.2f, decode %.2f, accumulate %.2f, "
        "wire and waiting %.2f, total on the engine %.2f\n",
        1e3 * select, 1e3 * encode, 1e3 * decode, 1e3 * accumulate,
        1e3 * (total - select - encode - decode - accumulate), 1e3 * total);
  }
  if (residual) dcResidualDestroy(residual);
  for (dcComm_t c : dense) dcCommDestroy(c);
  dcCommDestroy(world);
  return 0;
}
