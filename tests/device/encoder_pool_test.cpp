// The codec steps' encoders (device/encoder_pool.h): an encoder is lent to one encode at a time and
// kept for the next, encodes running at once get their own, and releasing frees the idle ones
// (communicator suspend) without changing what a later encode writes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "compression/compression.h"
#include "device/encoder_pool.h"

namespace dc::device {
namespace {

std::vector<uint8_t> encode_q8(compression::Encoder& encoder, const std::vector<float>& input) {
  const compression::Spec spec = compression::parse_spec("q8");
  std::vector<uint8_t> message(compression::max_message_bytes(spec, input.size()));
  const compression::EncodeResult result =
      encoder.encode(spec, dcFloat32, input.data(), input.size(), nullptr, 7, message);
  message.resize(result.bytes);
  return message;
}

TEST(EncoderPool, LentKeptReleasedAndTheSameBytesAfter) {
  release_idle_encoders();  // whatever an earlier test left
  std::vector<float> input(100000);
  for (size_t i = 0; i < input.size(); ++i) input[i] = std::sin(0.001f * static_cast<float>(i)) * 3.0f;

  compression::Encoder* first = nullptr;
  std::vector<uint8_t> before;
  {
    EncoderLease a;
    EncoderLease b;  // an encode running beside a's gets another encoder
    EXPECT_NE(&*a, &*b);
    first = &*a;
    before = encode_q8(*a, input);
  }
  {
    EncoderLease again;  // the last one given back (a's, as b's lease ended first), scratch and all
    EXPECT_EQ(&*again, first);
  }
  EXPECT_EQ(release_idle_encoders(), 2u);
  EXPECT_EQ(release_idle_encoders(), 0u);
  EncoderLease fresh;
  EXPECT_EQ(encode_q8(*fresh, input), before);
  EXPECT_FALSE(before.empty());
}

}  // namespace
}  // namespace dc::device
