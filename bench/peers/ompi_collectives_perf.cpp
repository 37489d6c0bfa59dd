// Open MPI's collectives on malloc'd float32 buffers (sum), measured like nccl-tests.
// Start with mpirun; the MCA flags choose shared memory (vader, UCX) or TCP.
#include <mpi.h>

#include <algorithm>

#include "bench/peers/peer_harness.h"

namespace {

class MpiBackend : public dcpeer::Backend {
 public:
  MpiBackend() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks_);
  }
  const char* name() const override { return "ompi"; }
  int rank() const override { return rank_; }
  int nranks() const override { return nranks_; }
  bool supports(dcpeer::Collective) const override { return true; }

  void run(dcpeer::Collective c, const float* send, float* recv, size_t count) override {
    const int n = static_cast<int>(count);  // sizes stay far below 2^31 elements
    switch (c) {
      case dcpeer::Collective::kAllReduce: MPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
      case dcpeer::Collective::kAllGather: MPI_Allgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, MPI_COMM_WORLD); break;
      case dcpeer::Collective::kReduceScatter:
        MPI_Reduce_scatter_block(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
      case dcpeer::Collective::kBroadcast:
        // Out of place as nccl-tests: the root's send buffer is copied to its receive buffer.
        if (rank_ == 0) std::copy(send, send + count, recv);
        MPI_Bcast(recv, n, MPI_FLOAT, 0, MPI_COMM_WORLD);
        break;
      case dcpeer::Collective::kAlltoAll: MPI_Alltoall(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, MPI_COMM_WORLD); break;
    }
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  double sum(double mine) override {
    double total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return total;
  }

 private:
  int rank_ = 0, nranks_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  dcpeer::Options options;
  int status = 1;
  if (dcpeer::parse_options(argc, argv, &options)) {
    MpiBackend backend;
    status = dcpeer::run_benchmark(backend, options);
  }
  MPI_Finalize();
  return status;
}
