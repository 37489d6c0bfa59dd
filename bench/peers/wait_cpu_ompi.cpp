// Open MPI's waiting cost: see wait_cpu.h. Start with mpirun -np N; optional argument: a JSON path.
#include <mpi.h>

#include <chrono>
#include <thread>
#include <vector>

#include "bench/peers/wait_cpu.h"

int main(int argc, char** argv) {
  constexpr double kSleepSeconds = 2.0;
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  std::vector<float> send(1024, 1.0f), recv(1024);
  for (int i = 0; i < 3; ++i) MPI_Allreduce(send.data(), recv.data(), 1024, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  double percent = 0;
  if (rank == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kSleepSeconds));
    MPI_Allreduce(send.data(), recv.data(), 1024, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  } else {
    const double cpu0 = dcpeer::process_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    MPI_Allreduce(send.data(), recv.data(), 1024, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    percent = 100.0 * (dcpeer::process_cpu_seconds() - cpu0) / wall;
  }
  std::vector<double> all(n, 0.0);
  MPI_Gather(&percent, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const bool correct = recv[0] == static_cast<float>(n);
  if (rank == 0) dcpeer::print_wait_cpu("ompi", kSleepSeconds, all, argc > 1 ? argv[1] : nullptr);
  MPI_Finalize();
  return correct ? 0 : 1;
}
