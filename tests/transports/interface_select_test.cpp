#include "base/net_interface.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace dc {
namespace {

const std::vector<NetInterface> kInterfaces = {
    {"lo", "127.0.0.1", true, true},    {"docker0", "172.17.0.1", true, false},
    {"eth0", "10.0.0.5", false, false},  // down
    {"eth1", "10.0.1.5", true, false},  {"ib0", "10.1.0.5", true, false},
};

TEST(InterfaceSelect, DefaultSkipsLoopbackDockerAndDown) { EXPECT_EQ(select_interface(kInterfaces, "").name, "eth1"); }

TEST(InterfaceSelect, DefaultFallsBackToLoopback) {
  EXPECT_EQ(select_interface({{"lo", "127.0.0.1", true, true}}, "").address, "127.0.0.1");
}

TEST(InterfaceSelect, Ipv4BeforeIpv6) {
  const std::vector<NetInterface> mixed = {{"eth0", "fd00::5", true, false}, {"eth1", "10.0.1.5", true, false}};
  EXPECT_EQ(select_interface(mixed, "").address, "10.0.1.5");
  EXPECT_EQ(select_interface(mixed, "eth0").address, "fd00::5");
}

TEST(InterfaceSelect, NoMatchNamesTheVariable) {
  try {
    select_interface(kInterfaces, "wlan", "DEEPCOMM_SOCKET_IFNAME");
    FAIL() << "wlan chosen";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), dcInvalidUsage);
    EXPECT_NE(std::string(e.what()).find("DEEPCOMM_SOCKET_IFNAME=wlan"), std::string::npos) << e.what();
  }
}

TEST(InterfaceSelect, PrefixList) {
  EXPECT_EQ(select_interface(kInterfaces, "ib").name, "ib0");
  EXPECT_EQ(select_interface(kInterfaces, "foo,eth").name, "eth1");
}

TEST(InterfaceSelect, Exclusion) { EXPECT_EQ(select_interface(kInterfaces, "^lo,docker,eth").name, "ib0"); }

TEST(InterfaceSelect, ExactName) {
  EXPECT_EQ(select_interface(kInterfaces, "=ib0").name, "ib0");
  EXPECT_THROW(select_interface(kInterfaces, "=ib"), Error);
}

TEST(InterfaceSelect, NoMatchIsAnError) { EXPECT_THROW(select_interface(kInterfaces, "wlan"), Error); }

}  // namespace
}  // namespace dc
