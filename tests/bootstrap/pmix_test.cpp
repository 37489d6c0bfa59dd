#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "tests/bootstrap/child_process.h"

namespace dc {
namespace {

std::string find_in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return dir + "/" + program;
  return {};
}

TEST(Pmix, MpirunRanksFindEachOther) {
#ifndef DEEPCOMM_HAVE_PMIX
  GTEST_SKIP() << "DeepComm was built without PMIx (libpmix-dev absent)";
#endif
  std::string mpirun = find_in_path("mpirun");
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not in PATH";
  auto r = test::run_program({mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "3", LAUNCH_PROBE,
                              "--expect-source", "pmix", "--expect-nranks", "3"},
                             20000);
  ASSERT_GE(r.wait_status, 0) << "mpirun did not finish in 20 s:\n" << r.output;
  EXPECT_TRUE(WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 0) << r.output;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(r.output.find("probe rank " + std::to_string(rank) + " of 3 (pmix): got all 3"), std::string::npos)
        << r.output;
}

}  // namespace
}  // namespace dc
