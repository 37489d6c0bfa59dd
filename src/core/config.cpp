#include "src/core/config.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "base/config_table.h"
#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"
#include "src/core/settings.h"
#include "src/exec/settings.h"
#include "src/plan/tuning.h"
#include "topology/settings.h"
#include "transports/settings.h"

namespace dc {

namespace {

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
  using namespace settings;
  Config c;
  c.transport = static_cast<TransportChoice>(config::choice(kTransport));
  if (auto v = config::text(kAlgo)) {
    c.algorithms = AlgorithmFilter::parse_deepcomm(*v);
  } else if (auto v = config::text(kNcclAlgo)) {
    std::vector<std::string> ignored;
    c.algorithms = AlgorithmFilter::parse_nccl(*v, &ignored);
    warn_once(ignored);
  }
  c.chunk_bytes = config::integer_as<uint64_t>(kChunkBytes);
  c.tree_threshold_bytes = config::integer_as<uint64_t>(kTreeThreshold);
  c.flat_bytes = config::integer_as<uint64_t>(kFlatBytes);
  if (auto v = config::text(kCompress); v && *v != "off") {
    try {
      c.compress = compression::parse_spec(*v);
    } catch (const Error& e) {
      fail(dcInvalidArgument, std::string("DeepComm: DEEPCOMM_COMPRESS: ") + e.what());
    }
  }
  c.compress_min_bytes = config::integer_as<uint64_t>(kCompressMinBytes);
  c.compress_ef_bytes = config::integer_as<uint64_t>(kCompressEfBytes);
  c.timeout_ms = config::integer_as<int>(kTimeout) * 1000;  // at most 2e9: fits
  c.connect_timeout_ms = config::integer_as<int>(kConnectTimeout) * 1000;
  if (auto file = topo::load_topology_file_from_env()) {
    check_tuning_rules(*file);
    c.topology_file = std::make_shared<const topo::TopologyFile>(std::move(*file));
  }
  if (auto v = config::text(kTopoDumpFile)) c.topology_dump_path = *v;
  c.bootstrap_timeout_ms = config::integer_as<int>(kBootstrapTimeout);
  return c;
}

void register_settings() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Every room's table up to this one, whether or not its reading code is linked in; the NCCL
    // library's own table (src/nccl/settings.h) is added by that library.
    config::Registry& registry = config::Registry::instance();
    for (config::Table table : {config::Table(settings::kBaseTable), config::Table(settings::kTransportsTable),
                                config::Table(settings::kTopologyTable), config::Table(settings::kExecTable),
                                config::Table(settings::kCoreTable)})
      registry.add(table);
  });
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
  if (auto v = config::text(settings::kHostId)) return *v;
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
