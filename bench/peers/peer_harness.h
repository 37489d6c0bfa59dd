// What the peer benchmarks (Open MPI, Gloo) share: nccl-tests' flags, sizes, counts and bus
// factors, deterministic inputs with exact float sums, the timing loop, and the table + JSON output
// in the same shape as DeepComm's *_perf -J files, so the comparison driver reads both alike.
#pragma once

#include <cstddef>
#include <string>

namespace dcpeer {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kAlltoAll };

struct Options {
  size_t min_bytes = 32 * 1024 * 1024;             // -b
  size_t max_bytes = 32 * 1024 * 1024;             // -e
  double step_factor = 2;                          // -f
  int iters = 20;                                  // -n
  int warmup = 5;                                  // -w
  int check = 1;                                   // -c
  Collective collective = Collective::kAllReduce;  // -C all_reduce|all_gather|reduce_scatter|broadcast|alltoall
  std::string json_path;                           // -J
  std::string store_dir;                           // -S (Gloo's FileStore rendezvous directory)
};

// One peer library's view of the job. Buffers are float32; counts follow nccl-tests (see specs).
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  virtual bool supports(Collective c) const = 0;
  // send/recv as nccl-tests lays them out; count is the per-rank block (nccl-tests' "count").
  virtual void run(Collective c, const float* send, float* recv, size_t count) = 0;
  virtual void barrier() = 0;
  virtual double sum(double mine) = 0;  // over ranks, every rank gets the result
};

bool parse_options(int argc, char** argv, Options* options);
const char* collective_name(Collective c);

// Runs every size and prints the table on rank 0; returns the process exit status.
int run_benchmark(Backend& backend, const Options& options);

}  // namespace dcpeer
