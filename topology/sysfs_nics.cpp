#include "topology/sysfs_nics.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

namespace dc::topo {
namespace {

namespace fs = std::filesystem;

// A sysfs attribute's first line, without trailing whitespace; nullopt when unreadable.
std::optional<std::string> read_attribute(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == ' ' || line.back() == '\n' || line.back() == '\r')) {
    line.pop_back();
  }
  return line;
}

std::optional<long long> read_integer(const fs::path& path) {
  auto text = read_attribute(path);
  if (!text) return std::nullopt;
  long long value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  return names;
}

// The PCI function a `device` entry leads to: the last path component shaped like a bus id, in
// the resolved path (a virtio NIC's device is a child of its PCI function) or else the link text.
std::string pci_function_of(const fs::path& device) {
  std::error_code ec;
  fs::path target = fs::canonical(device, ec);
  if (ec) target = fs::read_symlink(device, ec);
  if (ec) return {};
  std::string found;
  for (const fs::path& part : target) {
    if (is_pci_busid(part.string())) found = part.string();
  }
  return found;
}

// "100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)"
uint32_t parse_rate_mbps(const std::string& text) {
  double gbps = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, gbps);
  if (ec != std::errc() || std::string_view(ptr, end - ptr).rfind(" Gb/sec", 0) != 0) return 0;
  if (!(gbps > 0 && gbps < 4e6)) return 0;
  return static_cast<uint32_t>(gbps * 1000 + 0.5);
}

// "4: ACTIVE". ACTIVE and ACTIVE_DEFER carry traffic; DOWN, INIT and ARMED do not yet.
LinkState parse_port_state(const std::string& text) {
  int code = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, code);
  if (ec != std::errc() || ptr == end || *ptr != ':') return LinkState::Unknown;
  if (code == 4 || code == 5) return LinkState::Up;
  if (code >= 1 && code <= 3) return LinkState::Down;
  return LinkState::Unknown;
}

LinkLayer parse_link_layer_attr(const std::string& text) {
  if (text == "InfiniBand") return LinkLayer::InfiniBand;
  if (text == "Ethernet") return LinkLayer::Ethernet;
  return LinkLayer::Unknown;
}

LinkState parse_operstate(const std::string& text) {
  if (text == "up") return LinkState::Up;
  if (text == "down" || text == "lowerlayerdown" || text == "notpresent") return LinkState::Down;
  return LinkState::Unknown;
}

// ARPHRD_* from <linux/if_arp.h>
constexpr long long kArpEther = 1;
constexpr long long kArpInfiniband = 32;
constexpr long long kArpLoopback = 772;

}  // namespace

NicFacts read_sysfs_nic_facts(const std::string& root) {
  NicFacts facts;
  const fs::path ib_class = fs::path(root) / "class" / "infiniband";
  std::map<std::string, std::pair<std::string, int>> netdev_port;  // interface -> (device, port)
  for (const std::string& device : entries(ib_class)) {
    const fs::path dir = ib_class / device;
    const std::string pci = pci_function_of(dir / "device");
    for (const std::string& port_name : entries(dir / "ports")) {
      int port = 0;
      auto [ptr, ec] = std::from_chars(port_name.data(), port_name.data() + port_name.size(), port);
      if (ec != std::errc() || ptr != port_name.data() + port_name.size() || port <= 0) continue;
      const fs::path port_dir = dir / "ports" / port_name;
      RdmaPortFacts p;
      p.device = device;
      p.port = port;
      p.pci_busid = pci;
      if (auto v = read_attribute(port_dir / "link_layer")) p.link_layer = parse_link_layer_attr(*v);
      if (auto v = read_attribute(port_dir / "rate")) p.speed_mbps = parse_rate_mbps(*v);
      if (auto v = read_attribute(port_dir / "state")) p.state = parse_port_state(*v);
      if (auto v = read_attribute(port_dir / "gid_attrs" / "ndevs" / "0")) p.netdev = *v;
      facts.ports.push_back(std::move(p));
    }
    for (const std::string& netdev : entries(dir / "device" / "net")) {
      auto dev_port = read_integer(dir / "device" / "net" / netdev / "dev_port");
      const int port = dev_port && *dev_port >= 0 && *dev_port < 255 ? static_cast<int>(*dev_port) + 1 : 0;
      netdev_port[netdev] = {device, port};
    }
  }

  const fs::path net_class = fs::path(root) / "class" / "net";
  for (const std::string& name : entries(net_class)) {
    const fs::path dir = net_class / name;
    const auto type = read_integer(dir / "type");
    if (type && *type == kArpLoopback) continue;
    NetdevFacts d;
    d.name = name;
    std::error_code ec;
    const bool physical = fs::exists(fs::symlink_status(dir / "device", ec));
    if (physical) d.pci_busid = pci_function_of(dir / "device");
    if (type) {
      d.link_layer = *type == kArpEther        ? LinkLayer::Ethernet
                     : *type == kArpInfiniband ? LinkLayer::InfiniBand
                                               : LinkLayer::Unknown;
    }
    if (auto v = read_attribute(dir / "operstate")) d.state = parse_operstate(*v);
    if (!physical && d.state != LinkState::Up) continue;
    // Mb/s; -1 (or an error) while the link is down.
    if (auto v = read_integer(dir / "speed"); v && *v > 0 && *v < 4'000'000'000LL) {
      d.speed_mbps = static_cast<uint32_t>(*v);
    }
    auto bound = netdev_port.find(name);
    if (bound != netdev_port.end()) {
      d.rdma_device = bound->second.first;
      d.port = bound->second.second;
    }
    facts.netdevs.push_back(std::move(d));
  }
  return facts;
}

}  // namespace dc::topo
