#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/bootstrap/child_process.h"

namespace dc {
namespace {

constexpr int kDeadlineMs = 20000;

int exit_code(const test::ProgramResult& r) {
  return r.wait_status >= 0 && WIFEXITED(r.wait_status) ? WEXITSTATUS(r.wait_status) : -1;
}

TEST(Launcher, FourRanksFindEachOther) {
  auto r = test::run_program(
      {DEEPCOMM_RUN, "-n", "4", LAUNCH_PROBE, "--expect-source", "deepcomm-run", "--expect-nranks", "4"}, kDeadlineMs);
  EXPECT_EQ(exit_code(r), 0) << r.output;
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_NE(r.output.find("probe rank " + std::to_string(rank) + " of 4 (deepcomm-run): got all 4"),
              std::string::npos)
        << r.output;
}

TEST(Launcher, FailingRankIsNamedAndOthersAreStopped) {
  auto start = std::chrono::steady_clock::now();
  // Rank 2 exits 3 before joining, so the others wait in the bootstrap until the launcher stops
  // them.
  auto r = test::run_program(
      {DEEPCOMM_RUN, "-n", "4", "--grace", "1", LAUNCH_PROBE, "--fail-rank", "2", "--exit-code", "3"}, kDeadlineMs);
  EXPECT_EQ(exit_code(r), 3) << r.output;
  EXPECT_NE(r.output.find("rank 2 (pid"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("exited with status 3"), std::string::npos) << r.output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
}

TEST(Launcher, TimeoutStopsTheJob) {
  auto r = test::run_program({DEEPCOMM_RUN, "-n", "2", "--timeout", "1", "/bin/sleep", "30"}, kDeadlineMs);
  EXPECT_EQ(exit_code(r), 124) << r.output;
  EXPECT_NE(r.output.find("timeout of 1 s"), std::string::npos) << r.output;
}

TEST(Launcher, ForwardsSigterm) {
  pid_t pid = test::fork_child([] {
    execl(DEEPCOMM_RUN, DEEPCOMM_RUN, "-n", "3", "/bin/sleep", "30", static_cast<char*>(nullptr));
    return 127;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto start = std::chrono::steady_clock::now();
  kill(pid, SIGTERM);
  int status = test::wait_child(pid, 5000);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_GE(status, 0) << "the launcher did not end after SIGTERM";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
}

TEST(Launcher, BadCommandLines) {
  EXPECT_EQ(exit_code(test::run_program({DEEPCOMM_RUN, "/bin/true"}, kDeadlineMs)), 2);
  EXPECT_EQ(exit_code(test::run_program({DEEPCOMM_RUN, "-n", "0", "/bin/true"}, kDeadlineMs)), 2);
  EXPECT_EQ(exit_code(test::run_program({DEEPCOMM_RUN, "-n", "2"}, kDeadlineMs)), 2);
  auto missing = test::run_program({DEEPCOMM_RUN, "-n", "2", "/no/such/program"}, kDeadlineMs);
  EXPECT_EQ(exit_code(missing), 127) << missing.output;
  EXPECT_NE(missing.output.find("cannot execute /no/such/program"), std::string::npos) << missing.output;
}

}  // namespace
}  // namespace dc
