// parse_topology_file: JSON text to TopologyFile, checking every field against the schema in
// docs/topology-file.md. Each error names the file, the line of the value and its path.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>

#include "base/error.h"
#include "topology/json_reader.h"
#include "topology/json_writer.h"
#include "topology/settings.h"
#include "topology/topology_file.h"

namespace dc::topo {
namespace {

using Kind = JsonValue::Kind;

std::string item(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }
std::string member(const std::string& path, const std::string& key) {
  const std::string shown = is_valid_name(key, kMaxDeviceNameBytes) ? key : json_string(key);
  return path.empty() ? shown : path + "." + shown;
}

class Schema {
 public:
  explicit Schema(const std::string& source) : source_(source) {}

  [[noreturn]] void fail_at(int line, const std::string& path, const std::string& what) const {
    fail(dcInvalidArgument, "topology file " + source_ + ":" + std::to_string(line) + ": " +
                                (path.empty() ? "(top level)" : path) + ": " + what);
  }
  [[noreturn]] void fail_at(const JsonValue& v, const std::string& path, const std::string& what) const {
    fail_at(v.line, path, what);
  }

  const JsonValue& of_kind(const JsonValue& v, const std::string& path, Kind kind) const {
    if (v.kind != kind) {
      fail_at(v, path, std::string("expected ") + json_kind_name(kind) + ", got " + json_kind_name(v.kind));
    }
    return v;
  }

  // An object whose members are all among `allowed`; the `required` ones must be present.
  const JsonValue& object(const JsonValue& v, const std::string& path, std::initializer_list<const char*> allowed,
                          std::initializer_list<const char*> required = {}) const {
    of_kind(v, path, Kind::Object);
    for (size_t i = 0; i < v.keys.size(); ++i) {
      bool known = false;
      for (const char* name : allowed) known = known || v.keys[i] == name;
      if (!known) {
        std::string list;
        for (const char* name : allowed) list += (list.empty() ? "" : ", ") + std::string(name);
        fail_at(v.items[i], member(path, v.keys[i]), "unknown member (expected one of " + list + ")");
      }
    }
    for (const char* name : required) {
      if (v.find(name) == nullptr) fail_at(v, member(path, name), "required member is missing");
    }
    return v;
  }

  const JsonValue& array(const JsonValue& v, const std::string& path, bool allow_empty) const {
    of_kind(v, path, Kind::Array);
    if (!allow_empty && v.items.empty()) fail_at(v, path, "expected at least one element");
    return v;
  }

  // A number in [low, high], or (low, high] when positive is true.
  double number(const JsonValue& v, const std::string& path, double low, double high, bool positive) const {
    const std::string expected = positive ? "a positive number (at most " + json_number(high) + ")"
                                          : "a number from " + json_number(low) + " to " + json_number(high);
    if (v.kind != Kind::Number) fail_at(v, path, "expected " + expected + ", got " + json_kind_name(v.kind));
    double value = 0;
    auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), value);
    if (ec != std::errc() || end != v.text.data() + v.text.size() || !std::isfinite(value) || value < low ||
        value > high || (positive && value <= low)) {
      fail_at(v, path, "expected " + expected + ", got " + v.text);
    }
    return value;
  }

  int64_t integer(const JsonValue& v, const std::string& path, int64_t low, int64_t high) const {
    const std::string expected = "an integer from " + std::to_string(low) + " to " + std::to_string(high);
    if (v.kind != Kind::Number) fail_at(v, path, "expected " + expected + ", got " + json_kind_name(v.kind));
    int64_t value = 0;
    auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), value);
    if (ec != std::errc() || end != v.text.data() + v.text.size() || value < low || value > high) {
      fail_at(v, path, "expected " + expected + ", got " + v.text);
    }
    return value;
  }

  std::string name(const JsonValue& v, const std::string& path, size_t limit) const {
    of_kind(v, path, Kind::String);
    if (!is_valid_name(v.text, limit)) {
      fail_at(v, path,
              "expected a name of 1 to " + std::to_string(limit) + " printable ASCII characters without spaces, got " +
                  json_string(v.text));
    }
    return v.text;
  }

  std::string busid(const JsonValue& v, const std::string& path) const {
    of_kind(v, path, Kind::String);
    if (!is_pci_busid(v.text)) {
      fail_at(v, path, "expected a PCI bus id like \"0000:34:00.0\", got " + json_string(v.text));
    }
    return v.text;
  }

  template <typename Enum>
  Enum choice(const JsonValue& v, const std::string& path, std::optional<Enum> (*parse)(std::string_view),
              const char* names) const {
    of_kind(v, path, Kind::String);
    std::optional<Enum> value = parse(v.text);
    if (!value) fail_at(v, path, std::string("expected one of ") + names + ", got " + json_string(v.text));
    return *value;
  }

 private:
  std::string source_;
};

class Parser {
 public:
  explicit Parser(const std::string& source) : schema_(source) { file_.source = source; }

  TopologyFile parse(const JsonValue& root) {
    schema_.object(root, "", {"version", "tiers", "hosts", "tuning"}, {"version"});
    const JsonValue& version = *root.find("version");
    if (version.kind != Kind::Number || version.text != "1") {
      schema_.fail_at(version, "version",
                      "expected 1 (the only version), got " +
                          (version.kind == Kind::Number ? version.text : json_kind_name(version.kind)));
    }
    if (const JsonValue* tiers = root.find("tiers")) parse_tiers(*tiers);
    if (const JsonValue* hosts = root.find("hosts")) parse_hosts(*hosts);
    if (const JsonValue* tuning = root.find("tuning")) parse_tuning(*tuning);
    return std::move(file_);
  }

 private:
  void parse_tuning(const JsonValue& rules) {
    schema_.array(rules, "tuning", true);
    if (rules.items.size() > kMaxTuningRules)
      schema_.fail_at(rules, "tuning", "more than " + std::to_string(kMaxTuningRules) + " rules");
    for (size_t r = 0; r < rules.items.size(); ++r) {
      const JsonValue& v = rules.items[r];
      const std::string path = item("tuning", r);
      schema_.object(v, path, {"collective", "algorithm", "min_bytes", "max_bytes", "hosts", "ranks"},
                     {"collective", "algorithm", "min_bytes", "max_bytes"});
      TuningRule rule;
      rule.line = v.line;
      rule.collective = schema_.name(*v.find("collective"), path + ".collective", kMaxDeviceNameBytes);
      rule.algorithm = schema_.name(*v.find("algorithm"), path + ".algorithm", kMaxDeviceNameBytes);
      const auto max_bytes = static_cast<int64_t>(kMaxTuningBytes);
      rule.min_bytes = static_cast<uint64_t>(schema_.integer(*v.find("min_bytes"), path + ".min_bytes", 0, max_bytes));
      rule.max_bytes = static_cast<uint64_t>(
          schema_.integer(*v.find("max_bytes"), path + ".max_bytes", static_cast<int64_t>(rule.min_bytes), max_bytes));
      if (const JsonValue* f = v.find("hosts"))
        rule.hosts = static_cast<int>(schema_.integer(*f, path + ".hosts", 1, kMaxHosts));
      if (const JsonValue* f = v.find("ranks")) {
        rule.ranks = static_cast<int>(schema_.integer(*f, path + ".ranks", std::max(rule.hosts, 1), kMaxTuningRanks));
      }
      file_.tuning.push_back(std::move(rule));
    }
  }

  void parse_tiers(const JsonValue& tiers) {
    schema_.array(tiers, "tiers", true);
    if (tiers.items.size() > kMaxTiers)
      schema_.fail_at(tiers, "tiers", "more than " + std::to_string(kMaxTiers) + " tiers");
    std::map<std::string, size_t> names;
    for (size_t t = 0; t < tiers.items.size(); ++t) {
      const JsonValue& v = tiers.items[t];
      const std::string path = item("tiers", t);
      schema_.object(v, path, {"name", "bandwidth_gbps", "latency_us", "per_rail", "groups", "calibration"},
                     {"name", "bandwidth_gbps", "latency_us"});
      if (t > 0 && file_.tiers.back().groups.empty()) {
        schema_.fail_at(v, path, "never used: " + item("tiers", t - 1) + " has no groups, so it joins every host");
      }
      Tier tier;
      tier.line = v.line;
      tier.name = schema_.name(*v.find("name"), path + ".name", kMaxDeviceNameBytes);
      if (auto [it, fresh] = names.try_emplace(tier.name, t); !fresh) {
        schema_.fail_at(*v.find("name"), path + ".name",
                        tier.name + " is also " + item("tiers", it->second) + "'s name");
      }
      tier.bandwidth_gbps =
          schema_.number(*v.find("bandwidth_gbps"), path + ".bandwidth_gbps", 0, kMaxBandwidthGbps, true);
      tier.latency_us = schema_.number(*v.find("latency_us"), path + ".latency_us", 0, kMaxMicroseconds, false);
      if (const JsonValue* per_rail = v.find("per_rail")) {
        schema_.of_kind(*per_rail, path + ".per_rail", Kind::Bool);
        tier.per_rail = per_rail->boolean;
      }
      if (const JsonValue* c = v.find("calibration")) {
        const std::string cpath = path + ".calibration";
        schema_.object(*c, cpath, {"alpha_us", "beta_ns_per_byte"}, {"alpha_us", "beta_ns_per_byte"});
        TierCalibration cal;
        cal.alpha_us = schema_.number(*c->find("alpha_us"), cpath + ".alpha_us", 0, kMaxMicroseconds, false);
        cal.beta_ns_per_byte =
            schema_.number(*c->find("beta_ns_per_byte"), cpath + ".beta_ns_per_byte", 0, kMaxMicroseconds, true);
        tier.calibration = cal;
      }
      if (const JsonValue* groups = v.find("groups")) parse_groups(*groups, path + ".groups", tier);
      file_.tiers.push_back(std::move(tier));
    }
  }

  // Within one tier a host belongs to at most one group.
  void parse_groups(const JsonValue& groups, const std::string& path, Tier& tier) {
    schema_.array(groups, path, false);
    std::map<std::string, std::string> host_group;                // host name -> group path
    std::map<uint32_t, std::pair<uint32_t, std::string>> ranges;  // first -> (last, group path)
    std::set<std::string> group_names;
    for (size_t g = 0; g < groups.items.size(); ++g) {
      const JsonValue& v = groups.items[g];
      const std::string gpath = item(path, g);
      schema_.object(v, gpath, {"name", "hosts"}, {"hosts"});
      HostGroup group;
      group.line = v.line;
      if (const JsonValue* name = v.find("name")) {
        group.name = schema_.name(*name, gpath + ".name", kMaxDeviceNameBytes);
        if (!group_names.insert(group.name).second) {
          schema_.fail_at(*name, gpath + ".name", group.name + " names another group of this tier too");
        }
      }
      const JsonValue& hosts = schema_.array(*v.find("hosts"), gpath + ".hosts", false);
      for (size_t h = 0; h < hosts.items.size(); ++h) {
        const std::string hpath = item(gpath + ".hosts", h);
        HostRef ref = host_ref(hosts.items[h], hpath);
        if (!ref.name.empty()) {
          if (auto [it, fresh] = host_group.try_emplace(ref.name, gpath); !fresh) {
            schema_.fail_at(ref.line, hpath, "host " + ref.name + " is already in " + it->second);
          }
        } else {
          check_no_overlap(ranges, ref, hpath, gpath);
        }
        group.hosts.push_back(std::move(ref));
      }
      tier.groups.push_back(std::move(group));
    }
  }

  void check_no_overlap(std::map<uint32_t, std::pair<uint32_t, std::string>>& ranges, const HostRef& ref,
                        const std::string& hpath, const std::string& gpath) {
    const uint32_t last = ref.first + ref.count - 1;
    auto next = ranges.lower_bound(ref.first);
    if (next != ranges.end() && next->first <= last) {
      schema_.fail_at(ref.line, hpath,
                      "host index " + std::to_string(next->first) + " is already in " + next->second.second);
    }
    if (next != ranges.begin()) {
      auto prev = std::prev(next);
      if (prev->second.first >= ref.first) {
        schema_.fail_at(ref.line, hpath,
                        "host index " + std::to_string(ref.first) + " is already in " + prev->second.second);
      }
    }
    ranges.emplace(ref.first, std::make_pair(last, gpath));
  }

  HostRef host_ref(const JsonValue& v, const std::string& path) {
    HostRef ref;
    ref.line = v.line;
    if (v.kind == Kind::String) {
      ref.name = schema_.name(v, path, kMaxHostNameBytes);
    } else if (v.kind == Kind::Number) {
      ref.first = static_cast<uint32_t>(schema_.integer(v, path, 0, kMaxHosts - 1));
      ref.count = 1;
    } else if (v.kind == Kind::Object) {
      schema_.object(v, path, {"first", "count"}, {"first", "count"});
      ref.first = static_cast<uint32_t>(schema_.integer(*v.find("first"), path + ".first", 0, kMaxHosts - 1));
      ref.count = static_cast<uint32_t>(schema_.integer(*v.find("count"), path + ".count", 1, kMaxHosts - ref.first));
    } else {
      schema_.fail_at(v, path,
                      std::string("expected a host name, a host index or {\"first\": i, \"count\": n}, got ") +
                          json_kind_name(v.kind));
    }
    return ref;
  }

  void parse_hosts(const JsonValue& hosts) {
    schema_.array(hosts, "hosts", true);
    std::map<std::string, std::string> names;
    std::map<int64_t, std::string> indices;
    for (size_t h = 0; h < hosts.items.size(); ++h) {
      const JsonValue& v = hosts.items[h];
      const std::string path = item("hosts", h);
      schema_.object(v, path, {"name", "index", "packages", "numa_nodes", "cores", "gpus", "nics"});
      HostEntry entry;
      entry.line = v.line;
      const JsonValue* name = v.find("name");
      const JsonValue* index = v.find("index");
      if ((name == nullptr) == (index == nullptr)) {
        schema_.fail_at(v, path, "expected exactly one of \"name\" (a host name or \"*\") and \"index\"");
      }
      if (name != nullptr) {
        entry.name = schema_.name(*name, path + ".name", kMaxHostNameBytes);
        if (auto [it, fresh] = names.try_emplace(entry.name, path); !fresh) {
          schema_.fail_at(*name, path + ".name", entry.name + " is also " + it->second + "'s name");
        }
        entry.node.host = entry.name;
      } else {
        entry.index = schema_.integer(*index, path + ".index", 0, kMaxHosts - 1);
        if (auto [it, fresh] = indices.try_emplace(entry.index, path); !fresh) {
          schema_.fail_at(*index, path + ".index",
                          "host index " + std::to_string(entry.index) + " is also " + it->second + "'s");
        }
      }
      const std::pair<const char*, int*> counts[] = {
          {"packages", &entry.node.packages}, {"numa_nodes", &entry.node.numa_nodes}, {"cores", &entry.node.cores}};
      for (auto [key, field] : counts) {
        if (const JsonValue* c = v.find(key))
          *field = static_cast<int>(schema_.integer(*c, member(path, key), 0, kMaxCpuCount));
      }
      // NICs first: GPUs name their nearest NIC.
      if (const JsonValue* nics = v.find("nics")) parse_nics(*nics, path + ".nics", entry);
      if (const JsonValue* gpus = v.find("gpus")) parse_gpus(*gpus, path + ".gpus", entry);
      if (const JsonValue* nics = v.find("nics")) resolve_nearest_gpus(*nics, path + ".nics", entry);
      file_.hosts.push_back(std::move(entry));
    }
  }

  void parse_nics(const JsonValue& nics, const std::string& path, HostEntry& entry) {
    schema_.array(nics, path, true);
    if (nics.items.size() > kMaxSummaryDevices)
      schema_.fail_at(nics, path, "more than " + std::to_string(kMaxSummaryDevices) + " NICs");
    std::map<std::string, std::string> names;
    std::map<int, std::string> rails;
    for (size_t n = 0; n < nics.items.size(); ++n) {
      const JsonValue& v = nics.items[n];
      const std::string npath = item(path, n);
      schema_.object(v, npath,
                     {"name", "rdma_device", "port", "netdev", "pci", "link_layer", "speed_gbps", "state", "numa",
                      "rail", "nearest_gpu", "gpu_path"},
                     {"name"});
      SummaryNic nic;
      nic.name = schema_.name(*v.find("name"), npath + ".name", kMaxDeviceNameBytes);
      if (auto [it, fresh] = names.try_emplace(nic.name, npath); !fresh) {
        schema_.fail_at(*v.find("name"), npath + ".name", nic.name + " is also " + it->second + "'s name");
      }
      if (const JsonValue* f = v.find("rdma_device"))
        nic.rdma_device = schema_.name(*f, npath + ".rdma_device", kMaxDeviceNameBytes);
      if (const JsonValue* f = v.find("port")) {
        nic.port = static_cast<int>(schema_.integer(*f, npath + ".port", 1, 255));
        if (nic.rdma_device.empty()) schema_.fail_at(*f, npath + ".port", "a port needs an rdma_device");
      }
      if (const JsonValue* f = v.find("netdev")) nic.netdev = schema_.name(*f, npath + ".netdev", kMaxDeviceNameBytes);
      if (const JsonValue* f = v.find("pci")) nic.pci_busid = schema_.busid(*f, npath + ".pci");
      if (const JsonValue* f = v.find("link_layer")) {
        nic.link_layer =
            schema_.choice<LinkLayer>(*f, npath + ".link_layer", parse_link_layer, "infiniband, ethernet, unknown");
      }
      if (const JsonValue* f = v.find("speed_gbps")) {
        const double gbps = schema_.number(*f, npath + ".speed_gbps", 0, 4e6, false);
        nic.speed_mbps = static_cast<uint32_t>(std::llround(gbps * 1000));
      }
      if (const JsonValue* f = v.find("state")) {
        nic.state = schema_.choice<LinkState>(*f, npath + ".state", parse_link_state, "up, down, unknown");
      }
      if (const JsonValue* f = v.find("numa"))
        nic.numa = static_cast<int>(schema_.integer(*f, npath + ".numa", 0, kMaxCpuCount - 1));
      if (const JsonValue* f = v.find("rail")) {
        nic.rail = static_cast<int>(schema_.integer(*f, npath + ".rail", 0, kMaxRail));
        if (auto [it, fresh] = rails.try_emplace(nic.rail, npath); !fresh) {
          schema_.fail_at(*f, npath + ".rail", "rail " + std::to_string(nic.rail) + " is also " + it->second + "'s");
        }
      }
      if (const JsonValue* f = v.find("gpu_path")) {
        nic.gpu_path = schema_.choice<NicPath>(*f, npath + ".gpu_path", parse_nic_path,
                                               "switch, host_bridge, socket, system, unknown");
        if (v.find("nearest_gpu") == nullptr && nic.gpu_path != NicPath::Unknown) {
          schema_.fail_at(*f, npath + ".gpu_path", "a path needs a nearest_gpu");
        }
      }
      entry.node.nics.push_back(std::move(nic));
      entry.nic_lines.push_back(v.line);
    }
  }

  void parse_gpus(const JsonValue& gpus, const std::string& path, HostEntry& entry) {
    schema_.array(gpus, path, true);
    if (gpus.items.size() > kMaxSummaryDevices)
      schema_.fail_at(gpus, path, "more than " + std::to_string(kMaxSummaryDevices) + " GPUs");
    std::map<std::string, std::string> busids;
    for (size_t g = 0; g < gpus.items.size(); ++g) {
      const JsonValue& v = gpus.items[g];
      const std::string gpath = item(path, g);
      schema_.object(v, gpath, {"pci", "numa", "nic"}, {"pci"});
      SummaryGpu gpu;
      gpu.pci_busid = schema_.busid(*v.find("pci"), gpath + ".pci");
      if (auto [it, fresh] = busids.try_emplace(gpu.pci_busid, gpath); !fresh) {
        schema_.fail_at(*v.find("pci"), gpath + ".pci", gpu.pci_busid + " is also " + it->second + "'s");
      }
      if (const JsonValue* f = v.find("numa"))
        gpu.numa = static_cast<int>(schema_.integer(*f, gpath + ".numa", 0, kMaxCpuCount - 1));
      if (const JsonValue* f = v.find("nic")) {
        const std::string name = schema_.name(*f, gpath + ".nic", kMaxDeviceNameBytes);
        gpu.nearest_nic = nic_index(entry.node, name);
        if (gpu.nearest_nic < 0) schema_.fail_at(*f, gpath + ".nic", "no NIC named " + name + " in this host's nics");
      }
      entry.node.gpus.push_back(std::move(gpu));
      entry.gpu_lines.push_back(v.line);
    }
  }

  void resolve_nearest_gpus(const JsonValue& nics, const std::string& path, HostEntry& entry) {
    for (size_t n = 0; n < nics.items.size(); ++n) {
      const JsonValue* f = nics.items[n].find("nearest_gpu");
      if (f == nullptr) continue;
      const std::string fpath = item(path, n) + ".nearest_gpu";
      const std::string busid = schema_.busid(*f, fpath);
      int found = -1;
      for (size_t g = 0; g < entry.node.gpus.size(); ++g) {
        if (entry.node.gpus[g].pci_busid == busid) found = static_cast<int>(g);
      }
      if (found < 0) schema_.fail_at(*f, fpath, "no GPU " + busid + " in this host's gpus");
      entry.node.nics[n].nearest_gpu = found;
    }
  }

  static int nic_index(const NodeSummary& node, const std::string& name) {
    for (size_t n = 0; n < node.nics.size(); ++n) {
      if (node.nics[n].name == name) return static_cast<int>(n);
    }
    return -1;
  }

  Schema schema_;
  TopologyFile file_;
};

}  // namespace

TopologyFile parse_topology_file(std::string_view text, const std::string& source) {
  if (text.size() > kMaxTopologyFileBytes) {
    fail(dcInvalidArgument,
         "topology file " + source + ": larger than " + std::to_string(kMaxTopologyFileBytes >> 20) + " MiB");
  }
  JsonValue root;
  try {
    root = parse_json(text);
  } catch (const JsonSyntaxError& e) {
    fail(dcInvalidArgument, "topology file " + source + ":" + std::to_string(e.line()) + ":" +
                                std::to_string(e.column()) + ": " + e.what());
  }
  return Parser(source).parse(root);
}

TopologyFile load_topology_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(dcInvalidArgument, "topology file " + path + ": cannot open it");
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxTopologyFileBytes) break;  // parse_topology_file reports the size
  }
  if (in.bad()) fail(dcInvalidArgument, "topology file " + path + ": read error");
  return parse_topology_file(text, path);
}

std::optional<TopologyFile> load_topology_file_from_env() {
  const std::optional<std::string> path = config::text(settings::kTopoFile);
  if (!path) return std::nullopt;
  return load_topology_file(*path);
}

}  // namespace dc::topo
