#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "base/error.h"
#include "base/net_interface.h"
#include "src/core/bootstrap.h"
#include "src/core/bootstrap/host_port.h"
#include "src/core/bootstrap/unique_id_layout.h"

namespace dc {
namespace {

TEST(UniqueId, HexRoundTrip) {
  dcUniqueId id;
  make_unique_id(&id);
  std::string hex = unique_id_to_hex(id);
  ASSERT_EQ(hex.size(), 2u * DC_UNIQUE_ID_BYTES);
  dcUniqueId back = unique_id_from_hex(hex);
  EXPECT_EQ(0, std::memcmp(id.internal, back.internal, DC_UNIQUE_ID_BYTES));
  for (char& c : hex) c = static_cast<char>(std::toupper(c));
  back = unique_id_from_hex(hex);
  EXPECT_EQ(0, std::memcmp(id.internal, back.internal, DC_UNIQUE_ID_BYTES));
}

TEST(UniqueId, BadHexIsInvalidArgument) {
  try {
    unique_id_from_hex("abc");
    FAIL() << "short hex accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), dcInvalidArgument);
  }
  std::string hex(2 * DC_UNIQUE_ID_BYTES, '0');
  hex[7] = 'g';
  try {
    unique_id_from_hex(hex);
    FAIL() << "non-hex digit accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), dcInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("offset 7"), std::string::npos) << e.what();
  }
}

TEST(UniqueId, BadMagicIsInvalidArgument) {
  dcUniqueId zero{};
  try {
    validate_unique_id(zero);
    FAIL() << "zero id accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), dcInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not a DeepComm unique id"), std::string::npos) << e.what();
  }
  try {
    bootstrap_allgather(zero, 0, 1, "x", 1000);
    FAIL() << "allgather accepted a zero id";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), dcInvalidArgument);
  }
}

TEST(UniqueId, SessionsDifferAndAddressDecodes) {
  dcUniqueId a, b;
  make_unique_id(&a);
  make_unique_id(&b);
  validate_unique_id(a);
  EXPECT_NE(unique_id_session(a), unique_id_session(b));
  RootAddress ra = decode_root_address(a), rb = decode_root_address(b);
  EXPECT_FALSE(ra.hosted_by_rank0);
  EXPECT_NE(ra.endpoint.port(), 0);
  EXPECT_NE(ra.endpoint.port(), rb.endpoint.port());  // one root each
}

TEST(UniqueId, EncodesIpv6) {
  RootAddress root{{boost::asio::ip::make_address("fd00::1:2"), 4242}, true};
  IdCredentials credentials;
  credentials.session = 77;
  dcUniqueId id = encode_unique_id(root, credentials);
  validate_unique_id(id);
  RootAddress back = decode_root_address(id);
  EXPECT_EQ(back.endpoint, root.endpoint);
  EXPECT_TRUE(back.hosted_by_rank0);
  EXPECT_EQ(unique_id_session(id), 77u);
}

TEST(UniqueId, CarriesARandomSecretNowhereElse) {
  dcUniqueId a, b;
  make_unique_id(&a);
  make_unique_id(&b);
  const IdCredentials ca = unique_id_credentials(a), cb = unique_id_credentials(b);
  EXPECT_TRUE(ca.authenticated);
  EXPECT_NE(ca.secret, cb.secret);
  EXPECT_NE(ca.secret, Secret{});
  // The secret's bytes appear once in the id, and the session is no part of it.
  const std::string bytes(a.internal, sizeof a.internal);
  const std::string secret(reinterpret_cast<const char*>(ca.secret.bytes.data()), ca.secret.bytes.size());
  EXPECT_EQ(bytes.find(secret), bytes.rfind(secret));
}

TEST(UniqueId, UnknownFlagsAndStrayBytesAreRejected) {
  dcUniqueId id;
  make_unique_id(&id);
  for (size_t at : {size_t(5), size_t(12), size_t(60), size_t(127)}) {
    dcUniqueId bad = id;
    bad.internal[at] = static_cast<char>(bad.internal[at] ^ 0x40);
    EXPECT_THROW(validate_unique_id(bad), Error) << "byte " << at;
  }
}

TEST(HostPort, ParsesNcclCommIdForms) {
  EXPECT_EQ(parse_host_port("127.0.0.1:5000", "X"),
            boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 5000));
  EXPECT_EQ(parse_host_port("[::1]:6000", "X"),
            boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("::1"), 6000));
  EXPECT_TRUE(parse_host_port("localhost:7000", "X").address().is_loopback());
  for (const char* bad : {"127.0.0.1", "127.0.0.1:", ":80", "[::1]80", "host:99999", "h:x1"}) {
    try {
      parse_host_port(bad, "NCCL_COMM_ID");
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), dcInvalidArgument) << bad;
      EXPECT_NE(std::string(e.what()).find("NCCL_COMM_ID"), std::string::npos) << e.what();
    }
  }
}

class SocketInterface : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("NCCL_SOCKET_IFNAME");
    unsetenv("DEEPCOMM_SOCKET_IFNAME");
  }
};

TEST_F(SocketInterface, PrefixAndExactNamesSelectLoopback) {
  setenv("NCCL_SOCKET_IFNAME", "lo", 1);
  EXPECT_EQ(chosen_interface().address, "127.0.0.1");
  setenv("NCCL_SOCKET_IFNAME", "=lo", 1);
  EXPECT_EQ(chosen_interface().address, "127.0.0.1");
  setenv("DEEPCOMM_SOCKET_IFNAME", "nosuchif0,nosuchif1", 1);  // overrides NCCL_SOCKET_IFNAME
  try {
    chosen_interface();
    FAIL() << "an interface that does not exist was chosen";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), dcInvalidUsage);
    EXPECT_NE(std::string(e.what()).find("DEEPCOMM_SOCKET_IFNAME"), std::string::npos) << e.what();
  }
}

TEST_F(SocketInterface, ExcludingLoopbackNeverGivesLoopback) {
  setenv("NCCL_SOCKET_IFNAME", "^lo", 1);
  try {
    EXPECT_FALSE(chosen_interface().loopback);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), dcInvalidUsage);  // a host with no other interface
  }
}

}  // namespace
}  // namespace dc
