#include "tools/launcher/options.h"

#include <cstdlib>
#include <cstring>

#include "tools/launcher/placement.h"

namespace dc::launcher {

const char* const kUsage =
    "usage: deepcomm-run -n N [--netns NS,... [--ranks-per-host R,...]] [--timeout S] [--grace S]\n"
    "                    [--] program [args...]\n"
    "Starts N ranks of program on this host. Each gets DEEPCOMM_RANK, DEEPCOMM_NRANKS and\n"
    "DEEPCOMM_UNIQUE_ID (the launcher hosts the rendezvous root), plus LOCAL_RANK (also\n"
    "DEEPCOMM_LOCAL_RANK) and DEEPCOMM_LOCAL_NRANKS, counted on the rank's host.\n"
    "  -n, -np, --nranks N  number of ranks (1 or more)\n"
    "  --netns NS,...       run the ranks in these network namespaces, one per host (names from\n"
    "                       `ip netns add`, or paths such as /proc/PID/ns/net; needs root), block\n"
    "                       placement: ranks 0..R0-1 in the first, the next R1 in the second, ...\n"
    "                       By default N is split evenly, the first hosts taking one more. The\n"
    "                       launcher itself (the rendezvous root) enters the first namespace.\n"
    "  --ranks-per-host R,...  ranks on each host: one count for every host, or one per host\n"
    "                       (uneven placement, e.g. 3,1); -n may then be left out\n"
    "  --timeout S          stop every rank after S seconds (exit status 124)\n"
    "  --grace S            after a rank failed, stop the others after S seconds (default 3)\n"
    "Exits 0 when every rank exited 0; otherwise names the rank that failed first and exits\n"
    "with its status (128+signal when it was killed).\n";

namespace {
bool parse_count(const char* text, int min, int* out) {
  if (!text) return false;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (!*text || *end || value < min || value > 1000000) return false;
  *out = static_cast<int>(value);
  return true;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    parts.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

bool parse_names(const char* text, std::vector<std::string>* out) {
  if (!text) return false;
  *out = split_commas(text);
  for (const auto& name : *out)
    if (name.empty()) return false;
  return true;
}

bool parse_counts(const char* text, std::vector<int>* out) {
  if (!text) return false;
  out->clear();
  for (const auto& part : split_commas(text)) {
    int count = 0;
    if (!parse_count(part.c_str(), 0, &count)) return false;
    out->push_back(count);
  }
  return true;
}
}  // namespace

std::optional<Options> parse_options(int argc, char** argv, std::string* error) {
  Options options;
  std::vector<int> requested_per_host;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "-h" || arg == "--help") {
      error->clear();
      return std::nullopt;
    } else if (arg == "--") {
      ++i;
      break;
    } else if (arg == "-n" || arg == "-np" || arg == "--nranks") {
      if (!parse_count(value, 1, &options.nranks)) {
        *error = arg + " needs a number of ranks (1 or more)";
        return std::nullopt;
      }
      ++i;
    } else if (arg == "--netns") {
      if (!parse_names(value, &options.netns)) {
        *error = "--netns needs a comma-separated list of network namespaces";
        return std::nullopt;
      }
      ++i;
    } else if (arg == "--ranks-per-host") {
      if (!parse_counts(value, &requested_per_host)) {
        *error = "--ranks-per-host needs a comma-separated list of rank counts";
        return std::nullopt;
      }
      ++i;
    } else if (arg == "--timeout" || arg == "--grace") {
      if (!parse_count(value, arg == "--timeout" ? 1 : 0, arg == "--timeout" ? &options.timeout_s : &options.grace_s)) {
        *error = arg + " needs a number of seconds";
        return std::nullopt;
      }
      ++i;
    } else if (!arg.empty() && arg[0] == '-') {
      *error = "unknown option " + arg;
      return std::nullopt;
    } else {
      break;
    }
  }
  for (; i < argc; ++i) options.command.emplace_back(argv[i]);
  if (!requested_per_host.empty() && options.netns.empty()) {
    *error = "--ranks-per-host needs --netns";
    return std::nullopt;
  }
  if (options.nranks == 0 && requested_per_host.empty()) {
    *error = "-n N is required";
    return std::nullopt;
  }
  if (options.command.empty()) {
    *error = "no program given";
    return std::nullopt;
  }
  if (options.netns.empty()) {
    options.ranks_per_host = {options.nranks};
    return options;
  }
  auto counts = ranks_per_host(options.nranks, static_cast<int>(options.netns.size()), requested_per_host, error);
  if (!counts) return std::nullopt;
  options.ranks_per_host = *counts;
  options.nranks = 0;
  for (int c : *counts) options.nranks += c;
  return options;
}

}  // namespace dc::launcher
