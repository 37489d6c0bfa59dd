// A rank program for the network-fault tests: all-reduces of `bytes` for about `seconds`, checking
// every result (the last element carries each rank's vote to go on, so all ranks stop after the same
// call), then one line on stdout:
//   PROBE rank=R result=ok calls=N
//   PROBE rank=R result=error code=C at_ms=T call_ms=D calls=N message=...
// (T: CLOCK_BOOTTIME milliseconds when the failing call returned, the clock /proc/uptime reads, so
// the script compares it with the fault's time without the wall clock, which this machine's
// sandbox steps; D: how long it took). Exit 0 when every call succeeded, 10 for a clean error, 11
// for a wrong result.
//   fault_probe BYTES SECONDS
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "deepcomm/deepcomm.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: fault_probe BYTES SECONDS\n");
    return 2;
  }
  const size_t count = std::strtoull(argv[1], nullptr, 10) / sizeof(float);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[2]));
  dcComm_t comm = nullptr;
  if (dcCommInitFromEnv(&comm, nullptr) != dcSuccess) {
    std::printf("PROBE rank=? result=init-failed message=%s\n", dcGetLastError());
    return 12;
  }
  int rank = 0, nranks = 1;
  dcCommRank(comm, &rank);
  dcCommCount(comm, &nranks);
  std::vector<float> data(count + 1);
  long calls = 0;
  for (bool go_on = true; go_on;) {
    for (size_t i = 0; i < count; ++i) data[i] = float(rank + 1);
    data[count] = std::chrono::steady_clock::now() < until ? 1.f : 0.f;
    const auto started = std::chrono::steady_clock::now();
    const dcResult_t result = dcAllReduce(data.data(), data.data(), count + 1, dcFloat32, dcSum, comm, nullptr);
    timespec boot{};
    clock_gettime(CLOCK_BOOTTIME, &boot);
    const long long now_ms = boot.tv_sec * 1000LL + boot.tv_nsec / 1000000;
    const auto call_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
    if (result != dcSuccess) {
      std::printf("PROBE rank=%d result=error code=%d at_ms=%lld call_ms=%lld calls=%ld message=%s\n", rank,
                  static_cast<int>(result), static_cast<long long>(now_ms), static_cast<long long>(call_ms), calls,
                  dcGetLastError());
      std::fflush(stdout);
      dcCommAbort(comm);
      return 10;
    }
    const float expected = float(nranks * (nranks + 1) / 2);
    if (count && (data[0] != expected || data[count - 1] != expected)) {
      std::printf("PROBE rank=%d result=wrong calls=%ld\n", rank, calls);
      return 11;
    }
    ++calls;
    go_on = data[count] == float(nranks);
  }
  std::printf("PROBE rank=%d result=ok calls=%ld\n", rank, calls);
  std::fflush(stdout);
  dcCommDestroy(comm);
  return 0;
}
