// SHA-256 against FIPS 180 examples and HMAC-SHA-256 against every RFC 4231 test case.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/sha256.h"

namespace dc {
namespace {

std::string hex(const uint8_t* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[p[i] >> 4]);
    out.push_back(digits[p[i] & 15]);
  }
  return out;
}

std::string hex(const Digest& d) { return hex(d.data(), d.size()); }

std::string sha_hex(const std::string& text) { return hex(sha256(text.data(), text.size())); }

TEST(Sha256, Fips180Examples) {
  EXPECT_EQ(sha_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
                    "lmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The same digest whichever way the message is cut into update() calls (block and padding edges).
TEST(Sha256, PiecesMatchWhole) {
  std::string message;
  for (int i = 0; i < 300; ++i) message.push_back(static_cast<char>(i * 7 + 3));
  for (size_t length : {0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 300}) {
    const Digest whole = sha256(message.data(), length);
    for (size_t cut = 0; cut <= length; cut += 13) {
      Sha256 h;
      h.update(message.data(), cut);
      h.update(message.data() + cut, length - cut);
      EXPECT_EQ(hex(h.finish()), hex(whole)) << "length " << length << " cut " << cut;
    }
  }
}

struct Rfc4231Case {
  std::vector<uint8_t> key;
  std::string data;
  std::string mac;  // hex; case 5 compares the first 128 bits only
};

std::vector<uint8_t> repeat(uint8_t byte, size_t n) { return std::vector<uint8_t>(n, byte); }

TEST(HmacSha256, Rfc4231) {
  std::vector<uint8_t> key4;
  for (uint8_t b = 1; b <= 25; ++b) key4.push_back(b);
  const std::vector<Rfc4231Case> cases = {
      {repeat(0x0b, 20), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {{'J', 'e', 'f', 'e'},
       "what do ya want for nothing?",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {repeat(0xaa, 20), std::string(50, '\xdd'), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {key4, std::string(50, '\xcd'), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {repeat(0x0c, 20), "Test With Truncation", "a3b6167473100ee06e0c796c2955552b"},
      {repeat(0xaa, 131), "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {repeat(0xaa, 131),
       "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be "
       "hashed before being used by the HMAC algorithm.",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    const Digest mac = hmac_sha256(c.key.data(), c.key.size(), c.data.data(), c.data.size());
    EXPECT_EQ(hex(mac).substr(0, c.mac.size()), c.mac) << "RFC 4231 test case " << i + 1;
    HmacSha256 pieces(c.key.data(), c.key.size());
    pieces.update(c.data.data(), c.data.size() / 2);
    pieces.update(c.data.data() + c.data.size() / 2, c.data.size() - c.data.size() / 2);
    EXPECT_EQ(hex(pieces.finish()), hex(mac)) << "test case " << i + 1 << " fed in two pieces";
  }
}

TEST(ConstantTimeEqual, ComparesEveryByte) {
  uint8_t a[32] = {}, b[32] = {};
  EXPECT_TRUE(constant_time_equal(a, b, sizeof a));
  for (size_t i = 0; i < sizeof a; ++i) {
    b[i] = 1;
    EXPECT_FALSE(constant_time_equal(a, b, sizeof a)) << "difference at byte " << i;
    b[i] = 0;
  }
  EXPECT_TRUE(constant_time_equal(a, b, 0));
}

}  // namespace
}  // namespace dc
