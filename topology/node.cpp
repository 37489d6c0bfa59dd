// Names of the node model's enumerations, shared by the topology file, the summary and describe().
#include "topology/node.h"

namespace dc::topo {
namespace {

constexpr const char* kPathNames[] = {"switch", "host_bridge", "socket", "system", "unknown"};
constexpr const char* kLayerNames[] = {"unknown", "infiniband", "ethernet"};
constexpr const char* kStateNames[] = {"unknown", "up", "down"};

template <typename Enum, size_t N>
std::optional<Enum> find_name(const char* const (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

bool is_lower_hex(char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); }

}  // namespace

const char* nic_path_name(NicPath path) { return kPathNames[static_cast<size_t>(path)]; }
const char* link_layer_name(LinkLayer layer) { return kLayerNames[static_cast<size_t>(layer)]; }
const char* link_state_name(LinkState state) { return kStateNames[static_cast<size_t>(state)]; }

std::optional<NicPath> parse_nic_path(std::string_view name) { return find_name<NicPath>(kPathNames, name); }
std::optional<LinkLayer> parse_link_layer(std::string_view name) { return find_name<LinkLayer>(kLayerNames, name); }
std::optional<LinkState> parse_link_state(std::string_view name) { return find_name<LinkState>(kStateNames, name); }

bool is_pci_busid(std::string_view text) {
  static constexpr std::string_view kShape = "xxxx:xx:xx.x";
  if (text.size() != kShape.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (kShape[i] == 'x' ? !is_lower_hex(text[i]) : text[i] != kShape[i]) return false;
  }
  // The device number has 5 bits, the function 3.
  return text[8] <= '1' && text[11] <= '7';
}

}  // namespace dc::topo
