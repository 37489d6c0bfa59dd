#include "src/core/config.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/log.h"
#include "src/plan/tuning.h"

namespace dc {

namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}

uint64_t parse_unsigned(const char* name, const char* value, uint64_t min, uint64_t max) {
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(value, &end, 10);
  if (errno || !end || *end || value[0] == '-' || v < min || v > max) {
    fail(dcInvalidArgument, std::string("DeepComm: ") + name + "=" + value +
                                " is not an integer in [" + std::to_string(min) + ", " +
                                std::to_string(max) + "]");
  }
  return v;
}

// NCCL_ALGO names DeepComm ignores are told once per process, not at every communicator.
void warn_once(const std::vector<std::string>& lines) {
  static std::mutex mutex;
  static std::set<std::string> told;
  std::lock_guard<std::mutex> lock(mutex);
  for (const std::string& line : lines)
    if (told.insert(line).second) DC_WARN("%s", line.c_str());
}

}  // namespace

Config Config::from_environment() {
  Config c;
  if (const char* v = env("DEEPCOMM_TRANSPORT")) {
    std::string s(v);
    if (s == "auto") c.transport = TransportChoice::Auto;
    else if (s == "shm") c.transport = TransportChoice::Shm;
    else if (s == "tcp") c.transport = TransportChoice::Tcp;
    else if (s == "ucx") c.transport = TransportChoice::Ucx;
    else if (s == "ucx-all") c.transport = TransportChoice::UcxAll;
    else fail(dcInvalidArgument, "DeepComm: DEEPCOMM_TRANSPORT=" + s + " (expected auto, shm, tcp, ucx or ucx-all)");
  }
  if (const char* v = env("DEEPCOMM_ALGO")) {
    c.algorithms = AlgorithmFilter::parse_deepcomm(v);
  } else if (const char* v = env("NCCL_ALGO")) {
    std::vector<std::string> ignored;
    c.algorithms = AlgorithmFilter::parse_nccl(v, &ignored);
    warn_once(ignored);
  }
  if (const char* v = env("DEEPCOMM_CHUNK_BYTES"))
    c.chunk_bytes = parse_unsigned("DEEPCOMM_CHUNK_BYTES", v, 64, 1ull << 30);
  if (const char* v = env("DEEPCOMM_TREE_THRESHOLD"))
    c.tree_threshold_bytes = parse_unsigned("DEEPCOMM_TREE_THRESHOLD", v, 0, 1ull << 40);
  if (const char* v = env("DEEPCOMM_FLAT_BYTES"))
    c.flat_bytes = parse_unsigned("DEEPCOMM_FLAT_BYTES", v, 0, 16ull << 20);
  if (const char* v = env("DEEPCOMM_COMPRESS"); v && std::string(v) != "off") {
    try {
      c.compress = compression::parse_spec(v);
    } catch (const Error& e) {
      fail(dcInvalidArgument, std::string("DeepComm: DEEPCOMM_COMPRESS: ") + e.what());
    }
  }
  if (const char* v = env("DEEPCOMM_COMPRESS_MIN_BYTES"))
    c.compress_min_bytes = parse_unsigned("DEEPCOMM_COMPRESS_MIN_BYTES", v, 0, 1ull << 50);
  if (const char* v = env("DEEPCOMM_COMPRESS_EF_BYTES"))
    c.compress_ef_bytes = parse_unsigned("DEEPCOMM_COMPRESS_EF_BYTES", v, 0, 1ull << 50);
  if (const char* v = env("DEEPCOMM_TIMEOUT"))
    c.timeout_ms = static_cast<int>(parse_unsigned("DEEPCOMM_TIMEOUT", v, 1, 2000000) * 1000);
  if (const char* v = env("DEEPCOMM_CONNECT_TIMEOUT"))
    c.connect_timeout_ms = static_cast<int>(parse_unsigned("DEEPCOMM_CONNECT_TIMEOUT", v, 1, 2000000) * 1000);
  if (auto file = topo::load_topology_file_from_env()) {
    check_tuning_rules(*file);
    c.topology_file = std::make_shared<const topo::TopologyFile>(std::move(*file));
  }
  if (const char* v = env("DEEPCOMM_TOPO_DUMP_FILE")) c.topology_dump_path = v;
  if (const char* v = env("DEEPCOMM_BOOTSTRAP_TIMEOUT"))
    c.bootstrap_timeout_ms = static_cast<int>(parse_unsigned("DEEPCOMM_BOOTSTRAP_TIMEOUT", v, 1, 2000000000));
  return c;
}

namespace {

// The topology file's content (not its path): FNV-1a over its canonical text.
std::string topology_digest(const std::shared_ptr<const topo::TopologyFile>& file) {
  if (!file) return "none";
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : topo::write_topology_file(*file)) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

}  // namespace

std::vector<std::string> Config::plan_shaping_entries() const {
  const char* transport_names[] = {"auto", "shm", "tcp", "ucx", "ucx-all"};
  return {
      std::string("DEEPCOMM_TRANSPORT=") + transport_names[static_cast<int>(transport)],
      "DEEPCOMM_ALGO=" + algorithms.canonical(),
      "DEEPCOMM_CHUNK_BYTES=" + std::to_string(chunk_bytes),
      "DEEPCOMM_TREE_THRESHOLD=" + std::to_string(tree_threshold_bytes),
      "DEEPCOMM_FLAT_BYTES=" + std::to_string(flat_bytes),
      "DEEPCOMM_COMPRESS=" + (compress ? compress->to_string() : std::string("off")),
      "DEEPCOMM_COMPRESS_MIN_BYTES=" + std::to_string(compress_min_bytes),
      "DEEPCOMM_TOPO_FILE=" + topology_digest(topology_file),
  };
}

std::string host_identity() {
  if (const char* v = env("DEEPCOMM_HOST_ID")) return v;
  std::string boot_id;
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::getline(f, boot_id);
  struct stat st {};
  std::ostringstream id;
  id << boot_id;
  if (stat("/proc/self/ns/net", &st) == 0) id << "/netns:" << st.st_ino;
  return id.str();
}

}  // namespace dc
