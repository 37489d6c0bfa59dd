// The eager credit window both message channels (framed and UCX) keep, and how an eager message
// lands in its receive.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "transports/common/eager_credit.h"

namespace dc {
namespace {

constexpr size_t kHeader = 48;
constexpr size_t kMax = EagerCredit::kEagerMax;
constexpr size_t kWindow = EagerCredit::kEagerWindow;

TEST(EagerCredit, SenderGoesEagerUpToTheWindowThenAgainWhenCredited) {
  EagerCredit credit(kHeader);
  EXPECT_FALSE(credit.take(kMax + 1));  // too long to go eagerly at all
  const size_t fit = kWindow / (kMax + kHeader);
  for (size_t i = 0; i < fit; ++i) ASSERT_TRUE(credit.take(kMax)) << i;
  EXPECT_FALSE(credit.take(kMax));  // the window is spent
  const size_t left = kWindow - fit * (kMax + kHeader);
  ASSERT_GE(left, kHeader);
  EXPECT_TRUE(credit.take(left - kHeader));  // exactly the rest
  EXPECT_FALSE(credit.take(0));
  credit.untake(left - kHeader);  // dropped by cancel before it was sent
  EXPECT_TRUE(credit.returned(kMax + kHeader));
  EXPECT_TRUE(credit.take(kMax));
}

// A connection whose receiver pulls payloads in place sends eagerly only up to a lower limit; the
// limit never rises above kEagerMax.
TEST(EagerCredit, LimitBoundsWhatGoesEagerly) {
  EagerCredit credit(kHeader);
  credit.limit_to(8192);
  EXPECT_TRUE(credit.take(8192));
  EXPECT_FALSE(credit.take(8193));
  credit.limit_to(2 * kMax);
  EXPECT_TRUE(credit.take(kMax));
  EXPECT_FALSE(credit.take(kMax + 1));
}

TEST(EagerCredit, SenderRefusesMoreCreditThanItUsed) {
  EagerCredit credit(kHeader);
  ASSERT_TRUE(credit.take(100));
  EXPECT_FALSE(credit.returned(100 + kHeader + 1));
  EXPECT_TRUE(credit.returned(100 + kHeader));
  EXPECT_FALSE(credit.returned(1));
}

TEST(EagerCredit, ReceiverRefusesDataBeyondTheWindow) {
  EagerCredit credit(kHeader);
  const size_t fit = kWindow / (kMax + kHeader);
  for (size_t i = 0; i < fit; ++i) ASSERT_TRUE(credit.arrived(kMax)) << i;
  EXPECT_FALSE(credit.arrived(kMax));
}

TEST(EagerCredit, ReceiverReturnsCreditInBatchesAndReopensTheWindow) {
  EagerCredit credit(kHeader);
  const size_t cost = kMax + kHeader;
  const size_t fit = kWindow / cost;
  for (size_t i = 0; i < fit; ++i) ASSERT_TRUE(credit.arrived(kMax));
  ASSERT_FALSE(credit.arrived(kMax));
  size_t returned = 0, replies = 0;
  for (size_t i = 0; i < fit; ++i) {
    const size_t now = credit.consumed(kMax);
    if (now) {
      EXPECT_GE(now, kWindow / 8);  // never a reply per small message
      returned += now;
      ++replies;
    }
  }
  EXPECT_GT(replies, 0u);
  EXPECT_LT(replies, fit);
  // What went back is free again at the receiver; the rest waits for the next batch.
  EXPECT_EQ(returned % cost, 0u);
  for (size_t i = 0; i < returned / cost; ++i) EXPECT_TRUE(credit.arrived(kMax)) << i;
  EXPECT_FALSE(credit.arrived(kMax));
}

struct Receive {
  Tag tag;
  void* buf;
  size_t capacity;
};

TEST(LandEager, CopiesWhatFitsUnderTheSameSignature) {
  std::vector<char> buf(8, 'x');
  const Tag tag{};
  const char payload[] = "abcdef";
  const Status ok = land_eager(Receive{tag, buf.data(), buf.size()}, tag, 6, payload);
  EXPECT_TRUE(ok.ok()) << ok.message;
  EXPECT_EQ(std::memcmp(buf.data(), "abcdefxx", 8), 0);
}

TEST(LandEager, RefusesTooLongWithoutTouchingTheBuffer) {
  std::vector<char> buf(4, 'x');
  const Tag tag{};
  const Status s = land_eager(Receive{tag, buf.data(), buf.size()}, tag, 6, "abcdef");
  EXPECT_EQ(s.code, message_too_long(6, 4).code);
  EXPECT_EQ(s.message, message_too_long(6, 4).message);
  EXPECT_EQ(std::memcmp(buf.data(), "xxxx", 4), 0);
}

TEST(LandEager, RefusesAnotherOperationsMessageWithItsSignature) {
  std::vector<char> buf(8, 'x');
  const Tag posted{1, 2, 3, 0xAA};
  const Tag arrived{1, 2, 3, 0xBB};
  const Status s = land_eager(Receive{posted, buf.data(), buf.size()}, arrived, 6, "abcdef");
  EXPECT_EQ(s.code, dcInvalidUsage);
  EXPECT_EQ(s.detail, 0xBBu);
  EXPECT_EQ(std::memcmp(buf.data(), "xxxxxxxx", 8), 0);
}

}  // namespace
}  // namespace dc
