// A rank program for the namespace cluster: DEEPCOMM_COMPRESS on device buffers (the emulated
// device of the test plugin, through libnccl.so.2) against the same calls on host buffers, on an
// NCCL communicator made from deepcomm-run's variables (tests/support/device_compression_rounds.h).
// One line on stdout, then exit 0 when every round gave the host's bits:
//   PROBE rank=R result=ok         (or result=failed failures=N, result=init-failed message=...)
//   device_compress_probe sum|avg
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "deepcomm/nccl.h"
#include "tests/support/device_compression_rounds.h"

namespace {

// DEEPCOMM_UNIQUE_ID is the id's bytes in hex; an ncclUniqueId holds the same bytes.
bool id_from_hex(const char* hex, ncclUniqueId* id) {
  if (!hex || std::strlen(hex) != 2 * sizeof id->internal) return false;
  for (size_t i = 0; i < sizeof id->internal; ++i) {
    unsigned byte = 0;
    if (std::sscanf(hex + 2 * i, "%2x", &byte) != 1) return false;
    id->internal[i] = static_cast<char>(byte);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "sum") != 0 && std::strcmp(argv[1], "avg") != 0)) {
    std::fprintf(stderr, "usage: device_compress_probe sum|avg\n");
    return 2;
  }
  const char* rank_text = std::getenv("DEEPCOMM_RANK");
  const char* nranks_text = std::getenv("DEEPCOMM_NRANKS");
  ncclUniqueId id{};
  ncclComm_t comm = nullptr;
  if (!rank_text || !nranks_text || !id_from_hex(std::getenv("DEEPCOMM_UNIQUE_ID"), &id)) {
    std::printf("PROBE rank=? result=init-failed message=not started by deepcomm-run\n");
    return 12;
  }
  const int rank = std::atoi(rank_text), nranks = std::atoi(nranks_text);
  if (ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess) {
    std::printf("PROBE rank=%d result=init-failed message=%s\n", rank, ncclGetLastError(nullptr));
    return 12;
  }
  const ncclRedOp_t op = std::strcmp(argv[1], "avg") == 0 ? ncclAvg : ncclSum;
  const int failures = dctest::device_compression_rounds(rank, nranks, comm, TEST_STREAM_PLUGIN, op, -1);
  if (failures == 0) std::printf("PROBE rank=%d result=ok\n", rank);
  else std::printf("PROBE rank=%d result=failed failures=%d\n", rank, failures);
  std::fflush(stdout);
  ncclCommDestroy(comm);
  return failures == 0 ? 0 : 11;
}
