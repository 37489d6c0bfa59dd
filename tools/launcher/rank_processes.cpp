#include "tools/launcher/rank_processes.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <stdexcept>

extern char** environ;

namespace dc::launcher {

namespace {

bool is_rank_variable(const char* entry) {
  static const char* names[] = {"DEEPCOMM_RANK=",       "DEEPCOMM_NRANKS=",       "DEEPCOMM_UNIQUE_ID=",
                                "DEEPCOMM_LOCAL_RANK=", "DEEPCOMM_LOCAL_NRANKS=", "LOCAL_RANK="};
  for (const char* name : names)
    if (std::strncmp(entry, name, std::strlen(name)) == 0) return true;
  return false;
}

// The launcher's environment plus the rank's variables; local ones count the ranks of its host.
std::vector<std::string> rank_environment(int rank, int nranks, const RankPlace& place,
                                          const std::string& unique_id_hex) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (!is_rank_variable(*e)) env.emplace_back(*e);
  env.push_back("DEEPCOMM_RANK=" + std::to_string(rank));
  env.push_back("DEEPCOMM_NRANKS=" + std::to_string(nranks));
  env.push_back("DEEPCOMM_UNIQUE_ID=" + unique_id_hex);
  env.push_back("DEEPCOMM_LOCAL_RANK=" + std::to_string(place.local_rank));
  env.push_back("DEEPCOMM_LOCAL_NRANKS=" + std::to_string(place.local_nranks));
  env.push_back("LOCAL_RANK=" + std::to_string(place.local_rank));
  return env;
}

// Async-signal-safe (for the forked child): writes the parts to stderr.
void write_error(std::initializer_list<const char*> parts) {
  for (const char* p : parts) (void)!write(STDERR_FILENO, p, std::strlen(p));
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

RankProcesses::RankProcesses(const std::vector<std::string>& command, const std::vector<RankPlace>& places,
                             const NetworkNamespaces& hosts, const std::string& unique_id_hex,
                             const sigset_t& child_mask) {
  std::vector<std::string> args = command;
  std::vector<char*> argv = pointers_to(args);
  const int nranks = static_cast<int>(places.size());
  for (int rank = 0; rank < nranks; ++rank) {
    // Everything the child needs is built before fork: after it, only async-signal-safe calls.
    std::vector<std::string> env = rank_environment(rank, nranks, places[rank], unique_id_hex);
    const int netns_fd = hosts.fd(places[rank].host);
    std::vector<char*> envp = pointers_to(env);
    pid_t pid = fork();
    if (pid < 0) {
      signal_running(SIGKILL);
      throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    }
    if (pid == 0) {
      sigprocmask(SIG_SETMASK, &child_mask, nullptr);
      if (netns_fd >= 0 && setns(netns_fd, CLONE_NEWNET) != 0) {
        write_error({"deepcomm-run: cannot enter the rank's network namespace: ", strerror(errno), "\n"});
        _exit(127);
      }
      execvpe(argv[0], argv.data(), envp.data());
      write_error({"deepcomm-run: cannot execute ", argv[0], ": ", strerror(errno), "\n"});
      _exit(127);
    }
    ranks_.push_back({rank, pid, true, 0});
  }
}

std::vector<const RankProcess*> RankProcesses::reap() {
  std::vector<const RankProcess*> ended;
  for (auto& r : ranks_) {
    if (!r.running) continue;
    int status = 0;
    pid_t pid = waitpid(r.pid, &status, WNOHANG);
    if (pid == r.pid) {
      r.running = false;
      r.wait_status = status;
      ended.push_back(&r);
    }
  }
  return ended;
}

void RankProcesses::signal_running(int signal_number) {
  for (const auto& r : ranks_)
    if (r.running) kill(r.pid, signal_number);
}

bool RankProcesses::any_running() const {
  for (const auto& r : ranks_)
    if (r.running) return true;
  return false;
}

bool ended_well(int wait_status) { return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }

std::string describe_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    int s = WTERMSIG(wait_status);
    return "was killed by signal " + std::to_string(s) + " (" + strsignal(s) + ")";
  }
  return "ended with wait status " + std::to_string(wait_status);
}

}  // namespace dc::launcher
