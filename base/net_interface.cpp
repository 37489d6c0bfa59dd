#include "base/net_interface.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <sstream>

#include "base/error.h"
#include "base/settings.h"

namespace dc {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

bool matches_any(const std::string& name, const std::vector<std::string>& patterns, bool exact) {
  for (const auto& p : patterns) {
    if (exact ? name == p : starts_with(name, p)) return true;
  }
  return false;
}

bool is_ipv4(const NetInterface& i) { return i.address.find(':') == std::string::npos; }

// The first up interface `wanted` accepts, IPv4 addresses before IPv6 ones.
template <class Wanted>
const NetInterface* first(const std::vector<NetInterface>& interfaces, Wanted wanted) {
  for (bool v4 : {true, false})
    for (const auto& i : interfaces)
      if (i.up && is_ipv4(i) == v4 && wanted(i)) return &i;
  return nullptr;
}

}  // namespace

NetInterface select_interface(const std::vector<NetInterface>& interfaces, const std::string& spec,
                              const std::string& variable) {
  if (spec.empty()) {
    if (auto* i =
            first(interfaces, [](const NetInterface& n) { return !n.loopback && !starts_with(n.name, "docker"); }))
      return *i;
    if (auto* i = first(interfaces, [](const NetInterface& n) { return n.loopback; })) return *i;
    return NetInterface{"lo", "127.0.0.1", true, true};
  }
  std::string rest = spec;
  const bool exclude = rest[0] == '^';
  if (exclude) rest.erase(0, 1);
  const bool exact = !rest.empty() && rest[0] == '=';
  if (exact) rest.erase(0, 1);
  const auto patterns = split_commas(rest);
  if (auto* i =
          first(interfaces, [&](const NetInterface& n) { return matches_any(n.name, patterns, exact) != exclude; }))
    return *i;
  fail(dcInvalidUsage, variable + "=" + spec + " matches no up network interface with an address");
}

std::vector<NetInterface> list_interfaces() {
  std::vector<NetInterface> result;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return result;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      const auto* sin6 = reinterpret_cast<sockaddr_in6*>(a->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr)) continue;
      inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof text);
    } else {
      continue;
    }
    result.push_back(NetInterface{a->ifa_name, text, (a->ifa_flags & IFF_UP) != 0, (a->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(list);
  return result;
}

NetInterface chosen_interface() {
  for (const config::Setting* setting : {&settings::kDeepcommSocketIfname, &settings::kNcclSocketIfname}) {
    if (auto v = config::text(*setting)) return select_interface(list_interfaces(), *v, setting->name);
  }
  return select_interface(list_interfaces(), "");
}

}  // namespace dc
