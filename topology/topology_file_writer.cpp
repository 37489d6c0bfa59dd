// write_topology_file: TopologyFile to JSON text, keys in a fixed order, one GPU, NIC or group per
// line, fields with unknown values left out; and the dump of a detected node in that format.
#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/error.h"
#include "topology/json_writer.h"
#include "topology/topology_file.h"

namespace dc::topo {
namespace {

// Members of one JSON object on one line: {"a": 1, "b": "x"}.
class Line {
 public:
  Line& add(const char* key, const std::string& json) {
    text_ += (text_.empty() ? "{" : ", ") + json_string(key) + ": " + json;
    return *this;
  }
  Line& name(const char* key, const std::string& value) { return value.empty() ? *this : add(key, json_string(value)); }
  Line& count(const char* key, int64_t value, int64_t unknown) {
    return value == unknown ? *this : add(key, std::to_string(value));
  }
  std::string str() const { return text_.empty() ? "{}" : text_ + "}"; }

 private:
  std::string text_;
};

std::string host_ref(const HostRef& ref) {
  if (!ref.name.empty()) return json_string(ref.name);
  if (ref.count == 1) return std::to_string(ref.first);
  return Line().add("first", std::to_string(ref.first)).add("count", std::to_string(ref.count)).str();
}

std::string group_line(const HostGroup& group) {
  std::string hosts;
  for (const HostRef& ref : group.hosts) hosts += (hosts.empty() ? "" : ", ") + host_ref(ref);
  return Line().name("name", group.name).add("hosts", "[" + hosts + "]").str();
}

std::string speed_gbps(uint32_t mbps) { return json_number(mbps / 1000.0); }

std::string nic_line(const NodeSummary& node, const SummaryNic& n) {
  Line line;
  line.name("name", n.name).name("rdma_device", n.rdma_device).count("port", n.port, 0);
  line.name("netdev", n.netdev).name("pci", n.pci_busid);
  if (n.link_layer != LinkLayer::Unknown) line.add("link_layer", json_string(link_layer_name(n.link_layer)));
  if (n.speed_mbps != 0) line.add("speed_gbps", speed_gbps(n.speed_mbps));
  if (n.state != LinkState::Unknown) line.add("state", json_string(link_state_name(n.state)));
  line.count("numa", n.numa, -1).count("rail", n.rail, -1);
  if (n.nearest_gpu >= 0) line.name("nearest_gpu", node.gpus[static_cast<size_t>(n.nearest_gpu)].pci_busid);
  if (n.gpu_path != NicPath::Unknown) line.add("gpu_path", json_string(nic_path_name(n.gpu_path)));
  return line.str();
}

std::string gpu_line(const NodeSummary& node, const SummaryGpu& g) {
  Line line;
  line.name("pci", g.pci_busid).count("numa", g.numa, -1);
  if (g.nearest_nic >= 0) line.name("nic", node.nics[static_cast<size_t>(g.nearest_nic)].name);
  return line.str();
}

// A JSON array with one element per line at the given indent.
std::string block(const std::vector<std::string>& lines, const std::string& indent) {
  std::string out = "[\n";
  for (size_t i = 0; i < lines.size(); ++i) out += indent + "  " + lines[i] + (i + 1 < lines.size() ? ",\n" : "\n");
  return out + indent + "]";
}

std::string tier_text(const Tier& tier) {
  std::string out = "    {\n      \"name\": " + json_string(tier.name) +
                    ",\n      \"bandwidth_gbps\": " + json_number(tier.bandwidth_gbps) +
                    ",\n      \"latency_us\": " + json_number(tier.latency_us);
  if (tier.per_rail) out += ",\n      \"per_rail\": true";
  if (tier.calibration) {
    out += ",\n      \"calibration\": " + Line()
                                              .add("alpha_us", json_number(tier.calibration->alpha_us))
                                              .add("beta_ns_per_byte", json_number(tier.calibration->beta_ns_per_byte))
                                              .str();
  }
  if (!tier.groups.empty()) {
    std::vector<std::string> groups;
    for (const HostGroup& group : tier.groups) groups.push_back(group_line(group));
    out += ",\n      \"groups\": " + block(groups, "      ");
  }
  return out + "\n    }";
}

std::string host_text(const HostEntry& entry) {
  const NodeSummary& node = entry.node;
  std::string out = "    {\n      ";
  out += entry.index >= 0 ? "\"index\": " + std::to_string(entry.index) : "\"name\": " + json_string(entry.name);
  const std::pair<const char*, int> counts[] = {
      {"packages", node.packages}, {"numa_nodes", node.numa_nodes}, {"cores", node.cores}};
  for (auto [key, value] : counts) {
    if (value != 0) out += ",\n      " + json_string(key) + ": " + std::to_string(value);
  }
  if (!node.gpus.empty()) {
    std::vector<std::string> gpus;
    for (const SummaryGpu& g : node.gpus) gpus.push_back(gpu_line(node, g));
    out += ",\n      \"gpus\": " + block(gpus, "      ");
  }
  if (!node.nics.empty()) {
    std::vector<std::string> nics;
    for (const SummaryNic& n : node.nics) nics.push_back(nic_line(node, n));
    out += ",\n      \"nics\": " + block(nics, "      ");
  }
  return out + "\n    }";
}

std::string tuning_line(const TuningRule& rule) {
  Line line;
  line.name("collective", rule.collective).name("algorithm", rule.algorithm);
  line.add("min_bytes", std::to_string(rule.min_bytes)).add("max_bytes", std::to_string(rule.max_bytes));
  return line.count("hosts", rule.hosts, 0).count("ranks", rule.ranks, 0).str();
}

std::string list(const std::vector<std::string>& items) {
  std::string out = "[\n";
  for (size_t i = 0; i < items.size(); ++i) out += items[i] + (i + 1 < items.size() ? ",\n" : "\n");
  return out + "  ]";
}

}  // namespace

std::string write_topology_file(const TopologyFile& file) {
  std::string out = "{\n  \"version\": 1";
  if (!file.tiers.empty()) {
    std::vector<std::string> tiers;
    for (const Tier& tier : file.tiers) tiers.push_back(tier_text(tier));
    out += ",\n  \"tiers\": " + list(tiers);
  }
  if (!file.hosts.empty()) {
    std::vector<std::string> hosts;
    for (const HostEntry& entry : file.hosts) hosts.push_back(host_text(entry));
    out += ",\n  \"hosts\": " + list(hosts);
  }
  if (!file.tuning.empty()) {
    std::vector<std::string> rules;
    for (const TuningRule& rule : file.tuning) rules.push_back(tuning_line(rule));
    out += ",\n  \"tuning\": " + block(rules, "  ");
  }
  return out + "\n}\n";
}

TopologyFile topology_file_of(const NodeTopology& node) {
  TopologyFile file;
  file.source = node.source;
  HostEntry entry;
  entry.name = node.hostname;
  entry.node = summarize(node);
  file.hosts.push_back(std::move(entry));
  return file;
}

void dump_topology_file(const TopologyFile& file, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << write_topology_file(file);
  out.close();
  if (!out) fail(dcSystemError, "cannot write the topology file " + path + ": " + std::strerror(errno));
}

}  // namespace dc::topo
