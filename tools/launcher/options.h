// deepcomm-run's command line.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dc::launcher {

struct Options {
  int nranks = 0;
  int timeout_s = 0;                // 0: no limit on the whole job
  int grace_s = 3;                  // after a rank failed, how long the others may still end on their own
  std::vector<std::string> netns;   // --netns: the hosts; empty: every rank stays here
  std::vector<int> ranks_per_host;  // one count per host (one entry when netns is empty)
  std::vector<std::string> command;
};

extern const char* const kUsage;

// nullopt with *error set when the command line is wrong (an empty error: help was asked for).
std::optional<Options> parse_options(int argc, char** argv, std::string* error);

}  // namespace dc::launcher
