// deepcomm-run: starts N local ranks of a program with no MPI. The launcher makes the unique id
// and so hosts the rendezvous root (it is not a rank); it forwards SIGINT/SIGTERM to the ranks and
// stops them all when one fails. With --netns the ranks run in network namespaces (hosts of a
// cluster on one machine) and the launcher enters the first one before making the id, so that the
// root listens there, on an address every host can reach.
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

#include "base/error.h"
#include "src/core/bootstrap.h"
#include "tools/launcher/network_namespaces.h"
#include "tools/launcher/options.h"
#include "tools/launcher/placement.h"
#include "tools/launcher/rank_processes.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace dc::launcher;

constexpr std::chrono::seconds kTermToKill{2};  // SIGTERM, then SIGKILL if still running

// Watches the ranks until every one has ended and says how the job went.
class Supervisor {
 public:
  Supervisor(RankProcesses& ranks, const Options& options, int signal_fd)
      : ranks_(ranks), options_(options), signal_fd_(signal_fd) {
    if (options.timeout_s > 0) job_deadline_ = Clock::now() + std::chrono::seconds(options.timeout_s);
  }

  int run() {
    while (ranks_.any_running()) {
      pollfd p{signal_fd_, POLLIN, 0};
      int n = poll(&p, 1, wait_ms());
      if (n > 0) handle_signal();
      on_time_passed();
    }
    return exit_status();
  }

 private:
  int wait_ms() const {
    std::optional<Clock::time_point> next;
    for (auto t : {job_deadline_, stop_at_, kill_at_})
      if (t && (!next || *t < *next)) next = t;
    if (!next) return -1;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*next - Clock::now()).count();
    return ms < 0 ? 0 : static_cast<int>(ms) + 1;
  }

  void handle_signal() {
    signalfd_siginfo info;
    if (read(signal_fd_, &info, sizeof info) != sizeof info) return;
    int s = static_cast<int>(info.ssi_signo);
    if (s == SIGCHLD) {
      for (const RankProcess* r : ranks_.reap()) on_rank_ended(*r);
    } else {
      // A second interrupt means "now".
      ranks_.signal_running(interrupted_ ? SIGKILL : s);
      interrupted_ = s;
      if (!kill_at_) kill_at_ = Clock::now() + kTermToKill;
    }
  }

  void on_rank_ended(const RankProcess& r) {
    if (dc::launcher::ended_well(r.wait_status) || stopping_ || interrupted_) return;
    if (!first_failure_) {
      first_failure_ = r;
      std::fprintf(stderr, "deepcomm-run: rank %d (pid %d) %s; stopping the other ranks in %d s\n", r.rank,
                   static_cast<int>(r.pid), describe_wait_status(r.wait_status).c_str(), options_.grace_s);
      stop_at_ = Clock::now() + std::chrono::seconds(options_.grace_s);
    } else {
      std::fprintf(stderr, "deepcomm-run: rank %d (pid %d) %s\n", r.rank, static_cast<int>(r.pid),
                   describe_wait_status(r.wait_status).c_str());
    }
  }

  void on_time_passed() {
    auto now = Clock::now();
    if (job_deadline_ && now >= *job_deadline_) {
      std::fprintf(stderr, "deepcomm-run: timeout of %d s passed; stopping the ranks\n", options_.timeout_s);
      timed_out_ = true;
      job_deadline_.reset();
      stop_all();
    }
    if (stop_at_ && now >= *stop_at_) {
      stop_at_.reset();
      stop_all();
    }
    if (kill_at_ && now >= *kill_at_) {
      kill_at_.reset();
      ranks_.signal_running(SIGKILL);
    }
  }

  void stop_all() {
    stopping_ = true;
    ranks_.signal_running(SIGTERM);
    kill_at_ = Clock::now() + kTermToKill;
  }

  int exit_status() const {
    if (first_failure_) {
      int w = first_failure_->wait_status;
      return WIFEXITED(w) ? WEXITSTATUS(w) : 128 + WTERMSIG(w);
    }
    if (timed_out_) return 124;
    if (interrupted_) return 128 + interrupted_;
    return 0;
  }

  RankProcesses& ranks_;
  const Options& options_;
  int signal_fd_;
  std::optional<Clock::time_point> job_deadline_, stop_at_, kill_at_;
  std::optional<RankProcess> first_failure_;
  bool stopping_ = false;
  bool timed_out_ = false;
  int interrupted_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string error;
  auto options = parse_options(argc, argv, &error);
  if (!options) {
    if (!error.empty()) std::fprintf(stderr, "deepcomm-run: %s\n", error.c_str());
    std::fputs(kUsage, error.empty() ? stdout : stderr);
    return error.empty() ? 0 : 2;
  }

  // Blocked before the root's thread starts, so that only the signalfd receives them.
  sigset_t handled, original;
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  sigaddset(&handled, SIGINT);
  sigaddset(&handled, SIGTERM);
  sigprocmask(SIG_BLOCK, &handled, &original);
  int signal_fd = signalfd(-1, &handled, SFD_CLOEXEC);
  if (signal_fd < 0) {
    std::fprintf(stderr, "deepcomm-run: signalfd failed: %s\n", std::strerror(errno));
    return 1;
  }

  try {
    NetworkNamespaces hosts(options->netns);
    // The root's socket is made on this thread, and its thread inherits this thread's namespace.
    if (!hosts.empty()) hosts.enter(0);
    dcUniqueId id;
    dc::make_unique_id(&id);
    RankProcesses ranks(options->command, block_placement(options->ranks_per_host), hosts, dc::unique_id_to_hex(id),
                        original);
    return Supervisor(ranks, *options, signal_fd).run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deepcomm-run: %s\n", e.what());
    return 1;
  }
}
