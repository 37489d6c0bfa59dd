// Processes a test forks one by one (ranks first, a process that joins later), reaped together
// under one deadline, and what they share with the test: memory mapped before the fork, pipes
// read with a deadline. Header-only and free of DeepComm, for native and NCCL tests alike.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dctest {

inline int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A T in memory that the processes forked after this call share with the test (never unmapped:
// a test makes a few).
template <class T>
T* shared_between_processes() {
  void* at = mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return at == MAP_FAILED ? nullptr : new (at) T();
}

// Reads exactly len bytes unless timeout_ms passes or the writers are gone first.
inline bool read_within(int fd, void* dst, size_t len, int timeout_ms) {
  auto* at = static_cast<char*>(dst);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (len > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    const ssize_t n = read(fd, at, len);
    if (n <= 0) return false;
    at += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// Writes of up to PIPE_BUF bytes to a pipe are atomic: a few readers each get a whole message.
inline bool write_whole(int fd, const void* src, size_t len) {
  return write(fd, src, len) == static_cast<ssize_t>(len);
}

class ForkedProcesses {
 public:
  ForkedProcesses() = default;
  ForkedProcesses(const ForkedProcesses&) = delete;
  ForkedProcesses& operator=(const ForkedProcesses&) = delete;
  ~ForkedProcesses() {
    for (auto& p : children_) {
      if (p.pid > 0) {
        kill(p.pid, SIGKILL);
        waitpid(p.pid, nullptr, 0);
      }
    }
  }

  // Forks a child that runs body with env set and exits with its value. killed: the child is
  // expected to die of SIGKILL.
  void start(std::string name, const std::vector<std::pair<std::string, std::string>>& env,
             const std::function<int()>& body, bool killed = false) {
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
      for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      const int code = body();
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(code);
    }
    children_.push_back({std::move(name), pid, killed});
  }

  // Waits for every child; past the deadline kills the rest. "" when each ended as expected,
  // else what did not, by name.
  std::string finish(int timeout_s) {
    std::string errors;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    for (auto& c : children_) {
      if (c.pid <= 0) {
        errors += c.name + " could not be forked; ";
        continue;
      }
      int status = 0;
      for (;;) {
        if (waitpid(c.pid, &status, WNOHANG) == c.pid) break;
        if (std::chrono::steady_clock::now() > deadline) {
          kill(c.pid, SIGKILL);
          waitpid(c.pid, &status, 0);
          errors += c.name + " timed out; ";
          status = -1;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      c.pid = 0;
      if (status == -1) continue;
      if (c.killed) {
        if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
          errors += c.name + " was to be killed but ended with status " + std::to_string(status) + "; ";
      } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        errors += c.name + " exited " + std::to_string(WEXITSTATUS(status)) + "; ";
      } else if (WIFSIGNALED(status)) {
        errors += c.name + " killed by signal " + std::to_string(WTERMSIG(status)) + "; ";
      }
    }
    children_.clear();
    return errors;
  }

 private:
  struct Child {
    std::string name;
    pid_t pid = 0;
    bool killed = false;
  };
  std::vector<Child> children_;
};

}  // namespace dctest
