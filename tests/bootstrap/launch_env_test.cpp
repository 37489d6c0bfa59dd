#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "src/core/bootstrap.h"
#include "src/core/bootstrap/unique_id_layout.h"
#include "tests/bootstrap/blobs.h"
#include "tests/bootstrap/child_process.h"
#include "tests/support/test_port.h"

namespace dc {
namespace {

constexpr int kTimeoutMs = 10000;

// Launcher variables are set only in forked children, which start from none of them.
void clear_launcher_environment() {
  for (const char* name :
       {"DEEPCOMM_RANK", "DEEPCOMM_NRANKS", "DEEPCOMM_UNIQUE_ID", "PMIX_RANK", "PMIX_NAMESPACE", "RANK", "WORLD_SIZE",
        "MASTER_ADDR", "MASTER_PORT", "NCCL_COMM_ID", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT"})
    unsetenv(name);
}

int check(bool ok, const char* what) {
  if (!ok) std::fprintf(stderr, "child check failed: %s\n", what);
  return ok ? 0 : 1;
}

void expect_success(pid_t pid) {
  int status = test::wait_child(pid, kTimeoutMs + 5000);
  EXPECT_TRUE(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
}

TEST(LaunchInfo, FromDeepCommRunVariables) {
  dcUniqueId id;
  make_unique_id(&id);
  expect_success(test::fork_child([&] {
    clear_launcher_environment();
    setenv("DEEPCOMM_RANK", "2", 1);
    setenv("DEEPCOMM_NRANKS", "5", 1);
    setenv("DEEPCOMM_UNIQUE_ID", unique_id_to_hex(id).c_str(), 1);
    setenv("RANK", "0", 1);  // deepcomm-run's variables come first
    LaunchInfo info = launch_info_from_env(kTimeoutMs);
    return check(info.rank == 2, "rank") | check(info.nranks == 5, "nranks") |
           check(info.source == "deepcomm-run", "source") |
           check(std::memcmp(info.id.internal, id.internal, DC_UNIQUE_ID_BYTES) == 0, "id");
  }));
}

TEST(LaunchInfo, IncompleteOrBadDeepCommRunVariables) {
  expect_success(test::fork_child([&] {
    clear_launcher_environment();
    setenv("DEEPCOMM_RANK", "0", 1);
    int failures = 0;
    try {
      launch_info_from_env(kTimeoutMs);
      ++failures;
    } catch (const Error& e) {
      failures += check(e.code() == dcInvalidUsage, "code") |
                  check(std::strstr(e.what(), "DEEPCOMM_UNIQUE_ID") != nullptr, "names the missing one");
    }
    setenv("DEEPCOMM_NRANKS", "1", 1);
    setenv("DEEPCOMM_UNIQUE_ID", std::string(256, '0').c_str(), 1);  // no magic
    try {
      launch_info_from_env(kTimeoutMs);
      ++failures;
    } catch (const Error& e) {
      failures += check(e.code() == dcInvalidUsage, "bad id code") |
                  check(std::strstr(e.what(), "not a DeepComm unique id") != nullptr, "bad id text");
    }
    return failures;
  }));
}

TEST(LaunchInfo, NothingFoundSaysWhatWasLookedFor) {
  expect_success(test::fork_child([&] {
    clear_launcher_environment();
    try {
      launch_info_from_env(kTimeoutMs);
      return 1;
    } catch (const Error& e) {
      return check(e.code() == dcInvalidUsage, "code") |
             check(std::strstr(e.what(), "DEEPCOMM_RANK") != nullptr, "deepcomm-run named") |
             check(std::strstr(e.what(), "PMIX") != nullptr || std::strstr(e.what(), "PMIx") != nullptr, "PMIx named") |
             check(std::strstr(e.what(), "MASTER_ADDR") != nullptr, "torchrun named");
    }
  }));
}

// Two torchrun-style ranks find each other; rank 0 hosts the root on MASTER_PORT + 1.
TEST(LaunchInfo, TorchrunRanksMeet) {
  const int root_port = test::reserved_port();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < 2; ++rank)
    pids.push_back(test::fork_child([&, rank] {
      clear_launcher_environment();
      setenv("RANK", std::to_string(rank).c_str(), 1);
      setenv("WORLD_SIZE", "2", 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(root_port - 1).c_str(), 1);
      LaunchInfo info = launch_info_from_env(kTimeoutMs);
      RootAddress root = decode_root_address(info.id);
      int bad = check(info.source == "torchrun", "source") | check(info.rank == rank, "rank") |
                check(info.nranks == 2, "nranks") | check(root.hosted_by_rank0, "hosted by rank 0") |
                check(root.endpoint.port() == root_port, "MASTER_PORT + 1");
      auto blobs =
          bootstrap_allgather(info.id, info.rank, info.nranks, test::blob_of(info.rank, info.nranks), kTimeoutMs);
      return bad | check(test::first_wrong_blob(blobs, 2) < 0, "blobs");
    }));
  for (pid_t pid : pids) expect_success(pid);
}

// The root lives in rank 0's process: rank 0 may end as soon as it has the table, and the others
// still get theirs whole (a large one takes many writes).
TEST(LaunchInfo, RankZeroMayEndAsSoonAsItHasTheTable) {
  const int nranks = 4;
  auto blob = [](int rank) { return std::string(rank == 1 ? (8 << 20) : 64, static_cast<char>('a' + rank)); };
  for (int round = 0; round < 3; ++round) {
    const int root_port = test::reserved_port();
    std::vector<pid_t> pids;
    for (int rank = 0; rank < nranks; ++rank)
      pids.push_back(test::fork_child([&, rank] {
        clear_launcher_environment();
        setenv("RANK", std::to_string(rank).c_str(), 1);
        setenv("WORLD_SIZE", std::to_string(nranks).c_str(), 1);
        setenv("MASTER_ADDR", "127.0.0.1", 1);
        setenv("MASTER_PORT", std::to_string(root_port - 1).c_str(), 1);
        LaunchInfo info = launch_info_from_env(kTimeoutMs);
        auto blobs = bootstrap_allgather(info.id, info.rank, info.nranks, blob(rank), kTimeoutMs);
        if (rank == 0) return 0;  // at once: the process ends, and the root with it
        int bad = check(static_cast<int>(blobs.size()) == nranks, "table size");
        for (int r = 0; r < nranks && bad == 0; ++r) bad |= check(blobs[r] == blob(r), "a rank's blob");
        return bad;
      }));
    for (pid_t pid : pids) expect_success(pid);
  }
}

}  // namespace
}  // namespace dc
