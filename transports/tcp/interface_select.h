// Which local IPv4 address the TCP transport listens on, following NCCL_SOCKET_IFNAME's syntax
// (DEEPCOMM_SOCKET_IFNAME takes precedence): "eth,ib" = interface-name prefixes, "^docker,lo" =
// excluded prefixes, a leading "=" = exact names. Default: the first up non-loopback interface
// (docker* excluded, as NCCL does), else loopback.
#pragma once

#include <string>
#include <vector>

namespace dc {

struct NetInterface {
  std::string name;
  std::string ipv4;  // dotted quad
  bool up = false;
  bool loopback = false;
};

// Picks from `interfaces` (in system order) by `spec` (empty = default rule). Throws dc::Error
// (dcInvalidArgument) when a non-empty spec matches nothing.
NetInterface select_interface(const std::vector<NetInterface>& interfaces, const std::string& spec);

// The system's IPv4 interfaces (getifaddrs).
std::vector<NetInterface> list_ipv4_interfaces();

// The spec from DEEPCOMM_SOCKET_IFNAME or NCCL_SOCKET_IFNAME ("" when neither is set).
std::string socket_ifname_spec();

}  // namespace dc
