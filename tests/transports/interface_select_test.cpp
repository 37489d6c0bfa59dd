#include "transports/tcp/interface_select.h"

#include <gtest/gtest.h>

#include "src/base/error.h"

namespace dc {
namespace {

const std::vector<NetInterface> kInterfaces = {
    {"lo", "127.0.0.1", true, true},
    {"docker0", "172.17.0.1", true, false},
    {"eth0", "10.0.0.5", false, false},  // down
    {"eth1", "10.0.1.5", true, false},
    {"ib0", "10.1.0.5", true, false},
};

TEST(InterfaceSelect, DefaultSkipsLoopbackDockerAndDown) {
  EXPECT_EQ(select_interface(kInterfaces, "").name, "eth1");
}

TEST(InterfaceSelect, DefaultFallsBackToLoopback) {
  EXPECT_EQ(select_interface({{"lo", "127.0.0.1", true, true}}, "").ipv4, "127.0.0.1");
}

TEST(InterfaceSelect, PrefixList) {
  EXPECT_EQ(select_interface(kInterfaces, "ib").name, "ib0");
  EXPECT_EQ(select_interface(kInterfaces, "foo,eth").name, "eth1");
}

TEST(InterfaceSelect, Exclusion) {
  EXPECT_EQ(select_interface(kInterfaces, "^lo,docker,eth").name, "ib0");
}

TEST(InterfaceSelect, ExactName) {
  EXPECT_EQ(select_interface(kInterfaces, "=ib0").name, "ib0");
  EXPECT_THROW(select_interface(kInterfaces, "=ib"), Error);
}

TEST(InterfaceSelect, NoMatchIsAnError) {
  EXPECT_THROW(select_interface(kInterfaces, "wlan"), Error);
}

}  // namespace
}  // namespace dc
