// Gloo's collectives through its function API only (gloo::allreduce, allgather, broadcast, alltoall,
// barrier): a single call of the legacy class API on a context pins the socket buffers and slows
// every later call (BENCHMARKING.md). TCP transport on loopback; rendezvous through a FileStore
// directory (-S, fresh per job). Ranks come from deepcomm-run (DEEPCOMM_RANK/NRANKS) or mpirun
// (OMPI_COMM_WORLD_RANK/SIZE). Gloo 2022's function API has no reduce-scatter: -C reduce_scatter
// exits with status 2.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include "bench/peers/peer_harness.h"

namespace {

int env_int(const char* first, const char* second) {
  const char* v = getenv(first);
  if (!v) v = getenv(second);
  return v ? atoi(v) : -1;
}

class GlooBackend : public dcpeer::Backend {
 public:
  GlooBackend(int rank, int nranks, const std::string& store_dir) : rank_(rank), nranks_(nranks) {
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(store_dir);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, nranks);
    context->setTimeout(std::chrono::seconds(120));
    context->connectFullMesh(store, device);
    context_ = context;
  }
  const char* name() const override { return "gloo"; }
  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  bool supports(dcpeer::Collective c) const override { return c != dcpeer::Collective::kReduceScatter; }

  void run(dcpeer::Collective c, const float* send, float* recv, size_t count) override {
    float* in = const_cast<float*>(send);  // Gloo's setInput takes non-const pointers; it only reads
    const size_t n = nranks_;
    switch (c) {
      case dcpeer::Collective::kAllReduce: {
        gloo::AllreduceOptions o(context_);
        o.setInput(in, count);
        o.setOutput(recv, count);
        o.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
        o.setTag(next_tag());
        gloo::allreduce(o);
        break;
      }
      case dcpeer::Collective::kAllGather: {
        gloo::AllgatherOptions o(context_);
        o.setInput(in, count);
        o.setOutput(recv, count * n);
        o.setTag(next_tag());
        gloo::allgather(o);
        break;
      }
      case dcpeer::Collective::kBroadcast: {
        gloo::BroadcastOptions o(context_);
        if (rank_ == 0) o.setInput(in, count);
        o.setOutput(recv, count);
        o.setRoot(0);
        o.setTag(next_tag());
        gloo::broadcast(o);
        break;
      }
      case dcpeer::Collective::kAlltoAll: {
        gloo::AlltoallOptions o(context_);
        o.setInput(in, count * n);
        o.setOutput(recv, count * n);
        o.setTag(next_tag());
        gloo::alltoall(o);
        break;
      }
      case dcpeer::Collective::kReduceScatter: break;  // refused by supports()
    }
  }
  void barrier() override {
    gloo::BarrierOptions o(context_);
    o.setTag(next_tag());
    gloo::barrier(o);
  }
  double sum(double mine) override {
    double total = mine;
    gloo::AllreduceOptions o(context_);
    o.setOutput(&total, 1);
    o.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<double>));
    o.setTag(next_tag());
    gloo::allreduce(o);
    return total;
  }

 private:
  uint32_t next_tag() { return tag_++; }

  int rank_, nranks_;
  uint32_t tag_ = 1;
  std::shared_ptr<gloo::Context> context_;
};

}  // namespace

int main(int argc, char** argv) {
  dcpeer::Options options;
  if (!dcpeer::parse_options(argc, argv, &options)) return 1;
  const int rank = env_int("DEEPCOMM_RANK", "OMPI_COMM_WORLD_RANK");
  const int nranks = env_int("DEEPCOMM_NRANKS", "OMPI_COMM_WORLD_SIZE");
  if (rank < 0 || nranks < 1 || rank >= nranks) {
    fprintf(stderr, "%s: start with deepcomm-run or mpirun (no rank in the environment)\n", argv[0]);
    return 1;
  }
  if (options.store_dir.empty()) options.store_dir = "/tmp/gloo_collectives_perf." + std::to_string(getppid());
  mkdir(options.store_dir.c_str(), 0700);  // every rank; EEXIST is expected
  try {
    GlooBackend backend(rank, nranks, options.store_dir);
    return dcpeer::run_benchmark(backend, options);
  } catch (const std::exception& e) {
    fprintf(stderr, "%s rank %d: %s\n", argv[0], rank, e.what());
    return 1;
  }
}
