// Which local interface DeepComm's TCP listeners use, the rendezvous root and the TCP transport
// alike: NCCL_SOCKET_IFNAME's rules (DEEPCOMM_SOCKET_IFNAME takes precedence). "eth,ib" =
// interface-name prefixes, "^docker,lo" = excluded prefixes, a leading "=" = exact names; the first
// up interface that matches, IPv4 before IPv6 (link-local IPv6 addresses, which need a scope, are
// skipped). Unset: the first up interface that is neither loopback nor docker* (as NCCL), IPv4
// before IPv6, else loopback. Listeners bind that address only, never the wildcard.
#pragma once

#include <string>
#include <vector>

namespace dc {

struct NetInterface {
  std::string name;
  std::string address;  // numeric: dotted quad or IPv6 text
  bool up = false;
  bool loopback = false;
};

// Picks from `interfaces` (in system order) by `spec` (empty = the default rule). Throws dc::Error
// (dcInvalidUsage, naming `variable`) when a non-empty spec matches no up interface.
NetInterface select_interface(const std::vector<NetInterface>& interfaces, const std::string& spec,
                              const std::string& variable = "NCCL_SOCKET_IFNAME");

// The system's interfaces with an IPv4 or a routable IPv6 address (getifaddrs).
std::vector<NetInterface> list_interfaces();

// select_interface over list_interfaces() with the spec of DEEPCOMM_SOCKET_IFNAME or
// NCCL_SOCKET_IFNAME.
NetInterface chosen_interface();

}  // namespace dc
