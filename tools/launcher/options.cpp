#include "tools/launcher/options.h"

#include <cstdlib>
#include <cstring>

namespace dc::launcher {

const char* const kUsage =
    "usage: deepcomm-run -n N [--timeout S] [--grace S] [--] program [args...]\n"
    "Starts N ranks of program on this host. Each gets DEEPCOMM_RANK, DEEPCOMM_NRANKS and\n"
    "DEEPCOMM_UNIQUE_ID (the launcher hosts the rendezvous root), plus LOCAL_RANK.\n"
    "  -n, -np, --nranks N  number of ranks (1 or more)\n"
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
}  // namespace

std::optional<Options> parse_options(int argc, char** argv, std::string* error) {
  Options options;
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
    } else if (arg == "--timeout" || arg == "--grace") {
      if (!parse_count(value, arg == "--timeout" ? 1 : 0,
                       arg == "--timeout" ? &options.timeout_s : &options.grace_s)) {
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
  if (options.nranks == 0)
    *error = "-n N is required";
  else if (options.command.empty())
    *error = "no program given";
  else
    return options;
  return std::nullopt;
}

}  // namespace dc::launcher
