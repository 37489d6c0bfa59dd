// The ranks deepcomm-run starts: one child process per rank, each told its rank by environment
// and, with --netns, moved into its host's network namespace before exec; watched until all ended.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "tools/launcher/network_namespaces.h"
#include "tools/launcher/placement.h"

namespace dc::launcher {

struct RankProcess {
  int rank = 0;
  pid_t pid = -1;
  bool running = false;
  int wait_status = 0;  // waitpid status once ended
};

class RankProcesses {
 public:
  // Starts one copy of command per place (rank order), in the namespace of the place's host when
  // hosts is not empty; child_mask is the signal mask the children get back.
  RankProcesses(const std::vector<std::string>& command, const std::vector<RankPlace>& places,
                const NetworkNamespaces& hosts, const std::string& unique_id_hex, const sigset_t& child_mask);

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
