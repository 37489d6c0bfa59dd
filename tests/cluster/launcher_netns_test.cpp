// deepcomm-run --netns: a namespace that does not exist, or one the caller may not enter, is a
// clear message and a quick exit before any rank starts (needs no cluster).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "tests/bootstrap/child_process.h"

namespace dc {
namespace {

constexpr int kDeadlineMs = 10000;

int exit_code(const test::ProgramResult& r) {
  return r.wait_status >= 0 && WIFEXITED(r.wait_status) ? WEXITSTATUS(r.wait_status) : -1;
}

TEST(LauncherNetns, MissingNamespaceIsNamed) {
  auto start = std::chrono::steady_clock::now();
  auto r = test::run_program({DEEPCOMM_RUN, "-n", "2", "--netns", "dc-no-such-netns-0,x", "/bin/true"}, kDeadlineMs);
  EXPECT_EQ(exit_code(r), 1) << r.output;
  EXPECT_NE(r.output.find("no network namespace dc-no-such-netns-0"), std::string::npos) << r.output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(LauncherNetns, FileThatIsNoNamespaceIsRefused) {
  auto r = test::run_program({DEEPCOMM_RUN, "-n", "1", "--netns", "/etc/hostname", "/bin/true"}, kDeadlineMs);
  EXPECT_EQ(exit_code(r), 1) << r.output;
  EXPECT_NE(r.output.find("/etc/hostname is not a network namespace"), std::string::npos) << r.output;
}

// Entering even one's own namespace needs CAP_SYS_ADMIN: as root the launcher runs as nobody.
TEST(LauncherNetns, WithoutRightsTheMessageSaysRoot) {
  std::vector<std::string> argv = {DEEPCOMM_RUN, "-n", "1", "--netns", "/proc/self/ns/net", "/bin/true"};
  if (geteuid() == 0) {
    if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/setpriv to drop root";
    argv.insert(argv.begin(), {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  }
  auto r = test::run_program(argv, kDeadlineMs);
  if (r.output.find("Permission denied") != std::string::npos)
    GTEST_SKIP() << "nobody may not run the launcher here: " << r.output;
  EXPECT_EQ(exit_code(r), 1) << r.output;
  EXPECT_NE(r.output.find("needs root or CAP_SYS_ADMIN"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dc
