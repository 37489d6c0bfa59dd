#include "topology/node_summary.h"

#include <set>

#include "base/error.h"

namespace dc::topo {
namespace {

// Little-endian, no padding. "DCN1" names the format and its version.
constexpr std::string_view kMagic = "DCN1";

class Writer {
 public:
  void u8(unsigned v) { out_ += static_cast<char>(v & 0xff); }
  void u16(unsigned v) {
    u8(v);
    u8(v >> 8);
  }
  void u32(uint32_t v) {
    u16(v & 0xffff);
    u16(v >> 16);
  }
  void i32(int v) { u32(static_cast<uint32_t>(v)); }
  void str(const std::string& s) {
    u8(static_cast<unsigned>(s.size()));
    out_ += s;
  }
  void raw(std::string_view s) { out_ += s; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  unsigned u8(const char* what) {
    need(1, what);
    return static_cast<unsigned char>(in_[pos_++]);
  }
  unsigned u16(const char* what) {
    const unsigned low = u8(what);
    return low | (u8(what) << 8);
  }
  uint32_t u32(const char* what) {
    const uint32_t low = u16(what);
    return low | (static_cast<uint32_t>(u16(what)) << 16);
  }
  int i32(const char* what) { return static_cast<int>(u32(what)); }
  std::string str(const char* what) {
    const size_t length = u8(what);
    need(length, what);
    std::string s(in_.substr(pos_, length));
    pos_ += length;
    return s;
  }
  std::string_view raw(size_t length, const char* what) {
    need(length, what);
    std::string_view s = in_.substr(pos_, length);
    pos_ += length;
    return s;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  void need(size_t bytes, const char* what) {
    if (in_.size() - pos_ < bytes) fail(dcInvalidArgument, std::string("node summary: truncated in ") + what);
  }
  std::string_view in_;
  size_t pos_ = 0;
};

template <typename Enum>
Enum enum_from(unsigned value, Enum last, const char* what) {
  if (value > static_cast<unsigned>(last)) {
    fail(dcInvalidArgument, std::string("node summary: ") + what + " " + std::to_string(value) + " is not defined");
  }
  return static_cast<Enum>(value);
}

std::string at(const char* list, size_t i, const char* field) {
  return std::string(list) + "[" + std::to_string(i) + "]." + field + ": ";
}

bool in_range(int value, int low, int high) { return value >= low && value <= high; }

}  // namespace

bool is_valid_name(std::string_view name, size_t limit) {
  if (name.empty() || name.size() > limit) return false;
  for (char ch : name) {
    if (ch <= 0x20 || ch >= 0x7f) return false;
  }
  return true;
}

NodeSummary summarize(const NodeTopology& node) {
  NodeSummary s;
  s.host = node.hostname;
  s.packages = node.packages;
  s.numa_nodes = node.numa_nodes;
  s.cores = node.cores;
  for (const Gpu& gpu : node.gpus) s.gpus.push_back({gpu.pci_busid, gpu.numa, gpu.nearest_nic});
  for (const Nic& nic : node.nics) {
    s.nics.push_back({nic.name, nic.rdma_device, nic.port, nic.netdev, nic.pci_busid, nic.link_layer, nic.state,
                      nic.speed_mbps, nic.numa, nic.nearest_gpu, nic.gpu_path, nic.rail});
  }
  return s;
}

bool has_active_rdma_port(const NodeSummary& summary) {
  for (const SummaryNic& nic : summary.nics)
    if (!nic.rdma_device.empty() && nic.port > 0 && nic.state == LinkState::Up) return true;
  return false;
}

std::string check_summary(const NodeSummary& s) {
  if (!is_valid_name(s.host, kMaxHostNameBytes)) return "host: not a valid host name";
  for (auto [count, name] : {std::pair{s.packages, "packages"}, {s.numa_nodes, "numa_nodes"}, {s.cores, "cores"}}) {
    if (!in_range(count, 0, kMaxCpuCount)) return std::string(name) + ": out of range";
  }
  if (s.gpus.size() > kMaxSummaryDevices) return "gpus: more than " + std::to_string(kMaxSummaryDevices);
  if (s.nics.size() > kMaxSummaryDevices) return "nics: more than " + std::to_string(kMaxSummaryDevices);
  const int gpus = static_cast<int>(s.gpus.size());
  const int nics = static_cast<int>(s.nics.size());

  std::set<std::string> busids;
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    const SummaryGpu& g = s.gpus[i];
    if (!is_pci_busid(g.pci_busid)) return at("gpus", i, "pci") + "not a PCI bus id";
    if (!busids.insert(g.pci_busid).second) return at("gpus", i, "pci") + g.pci_busid + " is listed twice";
    if (!in_range(g.numa, -1, kMaxCpuCount - 1)) return at("gpus", i, "numa") + "out of range";
    if (!in_range(g.nearest_nic, -1, nics - 1)) return at("gpus", i, "nic") + "no such NIC";
  }
  std::set<std::string> names;
  std::vector<int> rail_owner(kMaxRail + 1, -1);
  for (size_t i = 0; i < s.nics.size(); ++i) {
    const SummaryNic& n = s.nics[i];
    if (!is_valid_name(n.name, kMaxDeviceNameBytes)) return at("nics", i, "name") + "not a valid name";
    if (!names.insert(n.name).second) return at("nics", i, "name") + n.name + " is listed twice";
    if (!n.rdma_device.empty() && !is_valid_name(n.rdma_device, kMaxDeviceNameBytes)) {
      return at("nics", i, "rdma_device") + "not a valid name";
    }
    if (!in_range(n.port, 0, 255)) return at("nics", i, "port") + "out of range";
    if (n.port > 0 && n.rdma_device.empty()) return at("nics", i, "port") + "a port needs an rdma_device";
    if (!n.netdev.empty() && !is_valid_name(n.netdev, kMaxDeviceNameBytes)) {
      return at("nics", i, "netdev") + "not a valid name";
    }
    if (!n.pci_busid.empty() && !is_pci_busid(n.pci_busid)) return at("nics", i, "pci") + "not a PCI bus id";
    if (n.link_layer > LinkLayer::Ethernet) return at("nics", i, "link_layer") + "not defined";
    if (n.state > LinkState::Down) return at("nics", i, "state") + "not defined";
    if (n.gpu_path > NicPath::Unknown) return at("nics", i, "gpu_path") + "not defined";
    if (!in_range(n.numa, -1, kMaxCpuCount - 1)) return at("nics", i, "numa") + "out of range";
    if (!in_range(n.nearest_gpu, -1, gpus - 1)) return at("nics", i, "nearest_gpu") + "no such GPU";
    if (n.nearest_gpu < 0 && n.gpu_path != NicPath::Unknown) {
      return at("nics", i, "gpu_path") + "a path needs a nearest_gpu";
    }
    if (!in_range(n.rail, -1, kMaxRail)) return at("nics", i, "rail") + "out of range";
    if (n.rail >= 0) {
      int& owner = rail_owner[static_cast<size_t>(n.rail)];
      if (owner >= 0)
        return at("nics", i, "rail") + std::to_string(n.rail) + " is also nics[" + std::to_string(owner) + "]'s";
      owner = static_cast<int>(i);
    }
  }
  return {};
}

std::string encode_summary(const NodeSummary& s) {
  if (std::string problem = check_summary(s); !problem.empty()) {
    fail(dcInvalidArgument, "node summary of " + s.host + ": " + problem);
  }
  Writer w;
  w.raw(kMagic);
  w.str(s.host);
  w.u32(static_cast<uint32_t>(s.packages));
  w.u32(static_cast<uint32_t>(s.numa_nodes));
  w.u32(static_cast<uint32_t>(s.cores));
  w.u16(static_cast<unsigned>(s.gpus.size()));
  for (const SummaryGpu& g : s.gpus) {
    w.str(g.pci_busid);
    w.i32(g.numa);
    w.i32(g.nearest_nic);
  }
  w.u16(static_cast<unsigned>(s.nics.size()));
  for (const SummaryNic& n : s.nics) {
    w.str(n.name);
    w.str(n.rdma_device);
    w.u8(static_cast<unsigned>(n.port));
    w.str(n.netdev);
    w.str(n.pci_busid);
    w.u8(static_cast<unsigned>(n.link_layer));
    w.u8(static_cast<unsigned>(n.state));
    w.u32(n.speed_mbps);
    w.i32(n.numa);
    w.i32(n.nearest_gpu);
    w.u8(static_cast<unsigned>(n.gpu_path));
    w.i32(n.rail);
  }
  return w.take();
}

NodeSummary decode_summary(std::string_view bytes) {
  Reader r(bytes);
  if (r.raw(kMagic.size(), "the header") != kMagic) fail(dcInvalidArgument, "node summary: unknown format");
  NodeSummary s;
  s.host = r.str("the host name");
  s.packages = r.i32("the CPU counts");
  s.numa_nodes = r.i32("the CPU counts");
  s.cores = r.i32("the CPU counts");
  const unsigned gpus = r.u16("the GPU count");
  if (gpus > kMaxSummaryDevices) fail(dcInvalidArgument, "node summary: too many GPUs");
  s.gpus.resize(gpus);
  for (SummaryGpu& g : s.gpus) {
    g.pci_busid = r.str("a GPU");
    g.numa = r.i32("a GPU");
    g.nearest_nic = r.i32("a GPU");
  }
  const unsigned nics = r.u16("the NIC count");
  if (nics > kMaxSummaryDevices) fail(dcInvalidArgument, "node summary: too many NICs");
  s.nics.resize(nics);
  for (SummaryNic& n : s.nics) {
    n.name = r.str("a NIC");
    n.rdma_device = r.str("a NIC");
    n.port = static_cast<int>(r.u8("a NIC"));
    n.netdev = r.str("a NIC");
    n.pci_busid = r.str("a NIC");
    n.link_layer = enum_from(r.u8("a NIC"), LinkLayer::Ethernet, "link layer");
    n.state = enum_from(r.u8("a NIC"), LinkState::Down, "link state");
    n.speed_mbps = r.u32("a NIC");
    n.numa = r.i32("a NIC");
    n.nearest_gpu = r.i32("a NIC");
    n.gpu_path = enum_from(r.u8("a NIC"), NicPath::Unknown, "GPU path");
    n.rail = r.i32("a NIC");
  }
  if (!r.done()) fail(dcInvalidArgument, "node summary: trailing bytes");
  if (std::string problem = check_summary(s); !problem.empty()) {
    fail(dcInvalidArgument, "node summary: " + problem);
  }
  return s;
}

}  // namespace dc::topo
