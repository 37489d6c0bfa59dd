#include "transports/tcp/interface_select.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstdlib>
#include <sstream>

#include "src/base/error.h"

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

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool matches_any(const std::string& name, const std::vector<std::string>& patterns, bool exact) {
  for (const auto& p : patterns) {
    if (exact ? name == p : starts_with(name, p)) return true;
  }
  return false;
}

}  // namespace

NetInterface select_interface(const std::vector<NetInterface>& interfaces, const std::string& spec) {
  if (spec.empty()) {
    for (const auto& i : interfaces) {
      if (i.up && !i.loopback && !starts_with(i.name, "docker")) return i;
    }
    for (const auto& i : interfaces) {
      if (i.up && i.loopback) return i;
    }
    return NetInterface{"lo", "127.0.0.1", true, true};
  }
  std::string rest = spec;
  const bool exclude = rest[0] == '^';
  if (exclude) rest.erase(0, 1);
  const bool exact = !rest.empty() && rest[0] == '=';
  if (exact) rest.erase(0, 1);
  const auto patterns = split_commas(rest);
  for (const auto& i : interfaces) {
    if (!i.up) continue;
    if (matches_any(i.name, patterns, exact) != exclude) return i;
  }
  fail(dcInvalidArgument, "socket interface selection '" + spec + "' matches no IPv4 interface that is up");
}

std::vector<NetInterface> list_ipv4_interfaces() {
  std::vector<NetInterface> result;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return result;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    result.push_back(NetInterface{a->ifa_name, text, (a->ifa_flags & IFF_UP) != 0,
                                  (a->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(list);
  return result;
}

std::string socket_ifname_spec() {
  for (const char* name : {"DEEPCOMM_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"}) {
    if (const char* v = std::getenv(name); v && *v) return v;
  }
  return "";
}

}  // namespace dc
