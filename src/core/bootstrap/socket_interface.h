// The address a rendezvous root advertises in its unique id, chosen as NCCL does.
#pragma once

#include <boost/asio/ip/address.hpp>

namespace dc {

// DEEPCOMM_SOCKET_IFNAME, else NCCL_SOCKET_IFNAME: comma-separated interface name prefixes
// ("^" first excludes them, "=" first asks for exact names); the first up interface that matches,
// IPv4 before IPv6. Unset: the first up non-loopback IPv4 interface, else 127.0.0.1.
// Throws dc::Error(dcInvalidUsage) when a set variable matches no interface with an address.
boost::asio::ip::address advertised_address();

}  // namespace dc
