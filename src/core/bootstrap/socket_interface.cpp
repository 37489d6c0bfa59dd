#include "src/core/bootstrap/socket_interface.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "src/base/error.h"

namespace dc {

namespace {

namespace ip = boost::asio::ip;

struct InterfaceFilter {
  std::vector<std::string> names;
  bool exclude = false;
  bool exact = false;

  bool matches(const std::string& name) const {
    bool listed = false;
    for (const auto& n : names)
      listed = listed || (exact ? name == n : name.compare(0, n.size(), n) == 0);
    return listed != exclude;
  }
};

InterfaceFilter parse_filter(std::string spec) {
  InterfaceFilter filter;
  if (!spec.empty() && spec[0] == '^') {
    filter.exclude = true;
    spec.erase(0, 1);
  }
  if (!spec.empty() && spec[0] == '=') {
    filter.exact = true;
    spec.erase(0, 1);
  }
  size_t start = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    if (comma > start) filter.names.push_back(spec.substr(start, comma - start));
    start = comma + 1;
  }
  return filter;
}

struct Candidate {
  std::string interface;
  ip::address address;
};

// Up interfaces with a usable address (IPv6 link-local addresses need a scope; skipped).
std::vector<Candidate> up_interfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0)
    fail(dcSystemError, std::string("getifaddrs failed: ") + std::strerror(errno));
  std::vector<Candidate> found;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
    if (i->ifa_addr->sa_family == AF_INET) {
      auto* sin = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      found.push_back({i->ifa_name, ip::address_v4(ntohl(sin->sin_addr.s_addr))});
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      auto* sin6 = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
      ip::address_v6::bytes_type bytes;
      std::memcpy(bytes.data(), &sin6->sin6_addr, bytes.size());
      ip::address_v6 v6(bytes);
      if (!v6.is_link_local()) found.push_back({i->ifa_name, v6});
    }
  }
  freeifaddrs(list);
  return found;
}

std::optional<ip::address> first_match(const std::vector<Candidate>& candidates, bool want_v4,
                                       const InterfaceFilter* filter) {
  for (const auto& c : candidates) {
    if (c.address.is_v4() != want_v4) continue;
    if (filter ? !filter->matches(c.interface) : c.address.is_loopback()) continue;
    return c.address;
  }
  return std::nullopt;
}

}  // namespace

ip::address advertised_address() {
  const char* variable = "DEEPCOMM_SOCKET_IFNAME";
  const char* spec = std::getenv(variable);
  if (!spec || !*spec) spec = std::getenv(variable = "NCCL_SOCKET_IFNAME");
  auto candidates = up_interfaces();
  if (spec && *spec) {
    InterfaceFilter filter = parse_filter(spec);
    if (auto a = first_match(candidates, true, &filter)) return *a;
    if (auto a = first_match(candidates, false, &filter)) return *a;
    fail(dcInvalidUsage,
         std::string(variable) + "=" + spec + " matches no up network interface with an address");
  }
  if (auto a = first_match(candidates, true, nullptr)) return *a;
  return ip::address_v4::loopback();
}

}  // namespace dc
