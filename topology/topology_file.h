// The topology file (JSON, schema in docs/topology-file.md): what detection cannot find out.
// Network tiers (bandwidth, latency, optional calibrated α/β) with the groups of hosts each joins,
// per-host entries in the node summary's terms (NIC rails, link speed, or a whole node for a
// simulated cluster), and measured algorithm choices (tuning rules). The same format holds what
// detection found (write_topology_file).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topology/node.h"
#include "topology/node_summary.h"

namespace dc::topo {

constexpr uint32_t kMaxHosts = 1 << 20;  // host indices are below this
constexpr size_t kMaxTopologyFileBytes = 16 << 20;
constexpr double kMaxBandwidthGbps = 1e6;
constexpr double kMaxMicroseconds = 1e7;
constexpr size_t kMaxTiers = 16;  // network tiers (the cost model keys loads by tier in 5 bits)
constexpr size_t kMaxTuningRules = 4096;
constexpr uint64_t kMaxTuningBytes = uint64_t{1} << 50;
constexpr int64_t kMaxTuningRanks = int64_t{kMaxHosts} * 64;

// A host named by host name, or a range of host indices (one index: count 1). Host indices are
// the cluster view's numbering of hosts.
struct HostRef {
  std::string name;  // empty for an index range
  uint32_t first = 0;
  uint32_t count = 0;
  int line = 0;
};

struct HostGroup {
  std::string name;  // optional
  std::vector<HostRef> hosts;
  int line = 0;
};

// The α-β model's parameters for one message over the tier, as measured by calibration.
struct TierCalibration {
  double alpha_us = 0;
  double beta_ns_per_byte = 0;
};

// Tiers are listed innermost (fastest) first. Two hosts talk over the first tier that has them in
// one group; a tier without groups joins every host (so it can only be the last).
struct Tier {
  std::string name;
  double bandwidth_gbps = 0;  // per host link (per rail when per_rail), Gbit/s
  double latency_us = 0;
  // Each rail of a host is a link of this tier (a host without rails has one); otherwise the
  // host's ranks share one link.
  bool per_rail = false;
  std::optional<TierCalibration> calibration;
  std::vector<HostGroup> groups;
  int line = 0;
};

// What the file says about one host (or, named "*", about every host no other entry names). Only
// the fields the file gives differ from the summary's unknown values.
struct HostEntry {
  std::string name;    // a host name or "*"; empty when the entry names a host index
  int64_t index = -1;  // -1 when the entry names a host
  NodeSummary node;
  int line = 0;
  std::vector<int> gpu_lines;  // line of each node.gpus entry
  std::vector<int> nic_lines;  // line of each node.nics entry
};

// A measured choice (written by deepcomm-tune): a call of `collective` moving min_bytes to
// max_bytes (count x element size, both inclusive) on a communicator of `hosts` hosts and `ranks`
// ranks (0: any) takes `algorithm` instead of the cost model's cheapest. The names are
// DEEPCOMM_ALGO's; the planner checks them (src/plan/tuning.h), the parser only their form.
struct TuningRule {
  std::string collective;
  std::string algorithm;
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
  int hosts = 0;
  int ranks = 0;
  int line = 0;
};

struct TopologyFile {
  std::string source;  // the path, or what the caller named the text
  std::vector<Tier> tiers;
  std::vector<HostEntry> hosts;
  std::vector<TuningRule> tuning;  // the first rule that matches a call decides
};

// Every parse function throws dc::Error (dcInvalidArgument) naming the source, the line and the
// field: "topology file x.json:12: tiers[1].bandwidth_gbps: expected a positive number ...".
TopologyFile parse_topology_file(std::string_view text, const std::string& source);
TopologyFile load_topology_file(const std::string& path);
// The file DEEPCOMM_TOPO_FILE names; nullopt when it is unset or empty.
std::optional<TopologyFile> load_topology_file_from_env();

// The file as JSON text that parse_topology_file reads back to the same content.
std::string write_topology_file(const TopologyFile& file);
// A file with no tiers and one host entry holding what was detected on the node.
TopologyFile topology_file_of(const NodeTopology& node);
// Writes write_topology_file(file) to path (DEEPCOMM_TOPO_DUMP_FILE is the caller's to read).
// Throws dc::Error (dcSystemError) when the file cannot be written.
void dump_topology_file(const TopologyFile& file, const std::string& path);

// The entry for a host: the one with its name, else the one with its index, else "*", else nullptr.
const HostEntry* find_host_entry(const TopologyFile& file, std::string_view host, uint32_t host_index);

// Overrides what the entry gives (CPU counts, GPUs' NUMA and nearest NIC, NICs' fields). If any of
// the entry's NICs has a rail, the entry's rails replace the detected ones (other NICs get none).
// Throws dc::Error (dcInvalidArgument) naming the file and line when the entry names a GPU or NIC
// the node lacks, or the result is inconsistent; the node is then unchanged.
void apply_host_entry(NodeSummary& node, const HostEntry& entry, const std::string& source);

}  // namespace dc::topo
