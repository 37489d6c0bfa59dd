// A rank program for the cluster tests: all-reduces 4 MiB a few times (results checked) on a
// communicator made from the launcher's environment, then checks where its bytes went
// (dcCommGetCounters) and prints them:
//   transport_counters_probe BETWEEN INSIDE      (each of shm, tcp, ucx)
//   transport_counters_probe --available         exit 0, or say why a one-rank communicator
//                                                cannot use DEEPCOMM_TRANSPORT here and exit 77
// Every rank moved bytes through BETWEEN (each has a peer on another host in the ring), a rank with
// peers on its own host (DEEPCOMM_LOCAL_NRANKS > 1) also through INSIDE, and no other transport
// carried any.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "deepcomm/deepcomm.h"

namespace {

uint64_t moved(const dcCounters_t& c, const std::string& transport) {
  if (transport == "shm") return c.shmBytesSent + c.shmBytesReceived;
  if (transport == "tcp") return c.tcpBytesSent + c.tcpBytesReceived;
  if (transport == "ucx") return c.ucxBytesSent + c.ucxBytesReceived;
  return 0;
}

}  // namespace

int available() {
  dcUniqueId id;
  dcComm_t comm = nullptr;
  if (dcGetUniqueId(&id) != dcSuccess || dcCommInitRank(&comm, 1, &id, 0, nullptr) != dcSuccess) {
    std::printf("%s\n", dcGetLastError());
    return 77;
  }
  dcCommDestroy(comm);
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--available") return available();
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s BETWEEN INSIDE (shm, tcp or ucx)\n", argv[0]);
    return 2;
  }
  const std::string between = argv[1], inside = argv[2];
  dcComm_t comm = nullptr;
  if (dcCommInitFromEnv(&comm, nullptr) != dcSuccess) {
    std::fprintf(stderr, "init: %s\n", dcGetLastError());
    return 1;
  }
  int rank = 0, n = 0;
  dcCommRank(comm, &rank);
  dcCommCount(comm, &n);
  std::vector<float> in(1 << 20, static_cast<float>(rank)), out(in.size());
  for (int i = 0; i < 3; ++i) {
    if (dcAllReduce(in.data(), out.data(), in.size(), dcFloat32, dcSum, comm, nullptr) != dcSuccess) {
      std::fprintf(stderr, "rank %d: all-reduce: %s\n", rank, dcGetLastError());
      return 1;
    }
    if (out[0] != static_cast<float>(n) * (n - 1) / 2 || out.back() != out[0]) {
      std::fprintf(stderr, "rank %d: wrong all-reduce result %g\n", rank, out[0]);
      return 1;
    }
  }
  dcCounters_t c{};
  if (dcCommGetCounters(comm, &c) != dcSuccess) return 1;
  dcCommDestroy(comm);
  const char* local = std::getenv("DEEPCOMM_LOCAL_NRANKS");
  const bool local_peers = local && std::atoi(local) > 1;
  std::printf("rank %d: shm %llu, tcp %llu, ucx %llu bytes moved\n", rank,
              static_cast<unsigned long long>(moved(c, "shm")), static_cast<unsigned long long>(moved(c, "tcp")),
              static_cast<unsigned long long>(moved(c, "ucx")));
  for (const char* t : {"shm", "tcp", "ucx"}) {
    const bool expected = t == between || (local_peers && t == inside);
    if (expected != (moved(c, t) > 0)) {
      std::fprintf(stderr, "rank %d: %s %s bytes\n", rank, expected ? "expected but got no" : "got unexpected", t);
      return 1;
    }
  }
  return 0;
}
