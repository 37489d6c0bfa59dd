// The ranks deepcomm-run starts: one child process per rank, each told its rank by environment,
// watched until all have ended.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace dc::launcher {

struct RankProcess {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  int wait_status = 0;  // waitpid status once ended
};

class RankProcesses {
 public:
  // Starts nranks copies of command; child_mask is the signal mask the children get back.
  RankProcesses(const std::vector<std::string>& command, int nranks,
                const std::string& unique_id_hex, const sigset_t& child_mask);

  // Reaps every child that ended; returns the ranks that ended now.
  std::vector<const RankProcess*> reap();
  void signal_running(int signal_number);
  bool any_running() const;

 private:
  std::vector<RankProcess> ranks_;
};

// "exited with status 3" / "was killed by signal 9 (Killed)".
std::string describe_wait_status(int wait_status);
bool ended_well(int wait_status);

}  // namespace dc::launcher
