// Helpers for tests that run ranks as processes: fork a body, wait for it with a deadline, run a
// program and capture its output.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace dc::test {

// Runs body in a forked child, which exits with body's return value (2 when it throws).
pid_t fork_child(const std::function<int()>& body);

// The child's wait status, or -1 when it did not end within timeout_ms (it is then killed).
int wait_child(pid_t pid, int timeout_ms);

struct ProgramResult {
  int wait_status = -1;  // -1: killed at the deadline
  std::string output;    // stdout and stderr together
};
// Runs argv (argv[0] a path) with extra "NAME=value" variables.
ProgramResult run_program(const std::vector<std::string>& argv, int timeout_ms,
                          const std::vector<std::string>& extra_env = {});

}  // namespace dc::test
