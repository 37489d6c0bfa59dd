#include <cstdlib>
#include <string>

#include "base/error.h"
#include "src/core/bootstrap/env_secret.h"
#include "src/core/bootstrap/host_port.h"
#include "src/core/bootstrap/launch_sources.h"
#include "src/core/bootstrap/unique_id_layout.h"
#include "src/core/settings.h"

namespace dc {

namespace {

bool is_set(const char* name) {
  const char* value = std::getenv(name);
  return value && *value;
}

std::string missing_among(std::initializer_list<const char*> names) {
  std::string missing;
  for (const char* name : names)
    if (!is_set(name)) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return missing;
}

}  // namespace

int env_int(const char* name, int min, int max) {
  const char* text = std::getenv(name);
  char* end = nullptr;
  long value = text ? std::strtol(text, &end, 10) : 0;
  if (!text || !*text || *end != '\0' || value < min || value > max)
    fail(dcInvalidUsage, std::string(name) + "=" + (text ? text : "") + " is not an integer in [" +
                             std::to_string(min) + ", " + std::to_string(max) + "]");
  return static_cast<int>(value);
}

std::optional<LaunchInfo> launch_info_from_deepcomm_run() {
  using namespace settings;
  const std::optional<std::string> id_hex = config::text(kUniqueId);
  if (!config::raw(kRank) && !config::raw(kNranks) && !id_hex) return std::nullopt;
  std::string missing;
  for (const config::Setting* s : {&kRank, &kNranks, &kUniqueId})
    if (!config::raw(*s)) missing += (missing.empty() ? "" : ", ") + std::string(s->name);
  if (!missing.empty()) fail(dcInvalidUsage, "deepcomm-run environment is incomplete: " + missing + " unset");
  LaunchInfo info;
  try {
    info.nranks = config::integer_as<int>(kNranks);
    info.rank = config::integer_as<int>(kRank);
  } catch (const Error& e) {
    fail(dcInvalidUsage, e.what());  // a launcher's bad variable is a usage error, as torchrun's
  }
  if (info.rank >= info.nranks)
    fail(dcInvalidUsage, "DeepComm: DEEPCOMM_RANK=" + std::to_string(info.rank) + " is not an integer in [0, " +
                             std::to_string(info.nranks - 1) + "]");
  try {
    info.id = unique_id_from_hex(*id_hex);
    validate_unique_id(info.id);
  } catch (const Error& e) {
    fail(dcInvalidUsage, std::string("DEEPCOMM_UNIQUE_ID: ") + e.what());
  }
  info.source = "deepcomm-run";
  return info;
}

std::optional<LaunchInfo> launch_info_from_torchrun() {
  if (!is_set("RANK") && !is_set("WORLD_SIZE")) return std::nullopt;
  std::string missing = missing_among({"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"});
  if (!missing.empty()) fail(dcInvalidUsage, "torchrun environment is incomplete: " + missing + " unset");
  LaunchInfo info;
  info.nranks = env_int("WORLD_SIZE", 1, 1 << 24);
  info.rank = env_int("RANK", 0, info.nranks - 1);
  int port = env_int("MASTER_PORT", 1, 65534);
  std::string host = std::getenv("MASTER_ADDR");
  if (host.find(':') != std::string::npos && host[0] != '[') host = "[" + host + "]";  // bare IPv6
  std::string address = host + ":" + std::to_string(port + 1);
  RootAddress root{parse_host_port(address, "MASTER_ADDR:MASTER_PORT+1"), true};
  // Every rank builds the id alone: the session comes from what they share, including the run id
  // and restart count of an elastic job so that a restarted job does not meet its predecessor.
  const char* run_id = std::getenv("TORCHELASTIC_RUN_ID");
  const char* restart = std::getenv("TORCHELASTIC_RESTART_COUNT");
  info.id = encode_unique_id(
      root, credentials_from_environment(
                "torchrun:" + address + ":" + (run_id ? run_id : "") + ":" + (restart ? restart : ""), "torchrun"));
  info.source = "torchrun";
  return info;
}

LaunchInfo launch_info_from_env(int timeout_ms) {
  if (auto info = launch_info_from_deepcomm_run()) return *info;
#ifdef DEEPCOMM_HAVE_PMIX
  if (auto info = launch_info_from_pmix(timeout_ms)) return *info;
  const char* pmix = "PMIX_RANK/PMIX_NAMESPACE (mpirun or srun with PMIx)";
#else
  (void)timeout_ms;
  const char* pmix = "PMIx (not built in: libpmix-dev was absent)";
#endif
  if (auto info = launch_info_from_torchrun()) return *info;
  fail(dcInvalidUsage, std::string("no launcher environment found; looked for DEEPCOMM_RANK/DEEPCOMM_NRANKS/"
                                   "DEEPCOMM_UNIQUE_ID (deepcomm-run), ") +
                           pmix + ", RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (torchrun)");
}

}  // namespace dc
