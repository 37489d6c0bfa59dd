// DeepComm's waiting cost: see wait_cpu.h. Start with deepcomm-run -n N; optional argument: a JSON path.
#include <chrono>
#include <thread>
#include <vector>

#include "bench/peers/wait_cpu.h"
#include "deepcomm/deepcomm.h"

int main(int argc, char** argv) {
  constexpr double kSleepSeconds = 2.0;
  dcComm_t comm = nullptr;
  if (dcCommInitFromEnv(&comm, nullptr) != dcSuccess) {
    fprintf(stderr, "%s: cannot start: %s\n", argv[0], dcGetLastError());
    return 1;
  }
  int rank = 0, n = 1;
  dcCommRank(comm, &rank);
  dcCommCount(comm, &n);
  std::vector<float> send(1024, 1.0f), recv(1024);
  for (int i = 0; i < 3; ++i)  // connections and pages are set up before the measured call
    dcAllReduce(send.data(), recv.data(), send.size(), dcFloat32, dcSum, comm, nullptr);
  double percent = 0;
  if (rank == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kSleepSeconds));
    dcAllReduce(send.data(), recv.data(), send.size(), dcFloat32, dcSum, comm, nullptr);
  } else {
    const double cpu0 = dcpeer::process_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    dcAllReduce(send.data(), recv.data(), send.size(), dcFloat32, dcSum, comm, nullptr);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    percent = 100.0 * (dcpeer::process_cpu_seconds() - cpu0) / wall;
  }
  std::vector<double> mine(n, 0.0), all(n, 0.0);
  mine[rank] = percent;
  dcAllReduce(mine.data(), all.data(), n, dcFloat64, dcSum, comm, nullptr);
  const bool correct = recv[0] == static_cast<float>(n);
  if (rank == 0) dcpeer::print_wait_cpu("deepcomm", kSleepSeconds, all, argc > 1 ? argv[1] : nullptr);
  dcCommDestroy(comm);
  return correct ? 0 : 1;
}
