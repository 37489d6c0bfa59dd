// A tiny rank program for the launcher and PMIx tests: finds its peers through
// launch_info_from_env, exchanges blobs, and exits 0 when it got every rank's.
//   launch_probe [--expect-source S] [--expect-nranks N] [--fail-rank R --exit-code C]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "src/core/bootstrap.h"

namespace {
std::string blob_of(int rank) { return "probe blob of rank " + std::to_string(rank); }
}  // namespace

int main(int argc, char** argv) {
  std::string expect_source;
  int expect_nranks = 0, fail_rank = -1, exit_code = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--expect-source") expect_source = argv[i + 1];
    else if (flag == "--expect-nranks") expect_nranks = std::atoi(argv[i + 1]);
    else if (flag == "--fail-rank") fail_rank = std::atoi(argv[i + 1]);
    else if (flag == "--exit-code") exit_code = std::atoi(argv[i + 1]);
  }
  try {
    dc::LaunchInfo info = dc::launch_info_from_env(15000);
    if (!expect_source.empty() && info.source != expect_source) {
      std::fprintf(stderr, "probe: source %s, expected %s\n", info.source.c_str(), expect_source.c_str());
      return 4;
    }
    if (expect_nranks && info.nranks != expect_nranks) {
      std::fprintf(stderr, "probe: %d ranks, expected %d\n", info.nranks, expect_nranks);
      return 4;
    }
    if (info.rank == fail_rank) return exit_code;
    auto blobs = dc::bootstrap_allgather(info.id, info.rank, info.nranks, blob_of(info.rank), 15000);
    for (int r = 0; r < info.nranks; ++r)
      if (blobs[r] != blob_of(r)) {
        std::fprintf(stderr, "probe rank %d: wrong blob from rank %d\n", info.rank, r);
        return 1;
      }
    std::printf("probe rank %d of %d (%s): got all %d blobs\n", info.rank, info.nranks, info.source.c_str(),
                info.nranks);
    return 0;
  } catch (const dc::Error& e) {
    std::fprintf(stderr, "probe: %s\n", e.what());
    return 2;
  }
}
