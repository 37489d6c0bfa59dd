// A corrupted, truncated, oversized or mismatched message is an error with a message, never a
// garbage result: every flipped bit is caught by a checksum before the destination is touched,
// and with the checksums recomputed the structural checks catch forged fields.
#include <gtest/gtest.h>

#include "compression/form/wire_format.h"
#include "tests/compression/test_support.h"
#include "tests/fuzz/compression/reseal.h"

namespace dc::compression::test {
namespace {

const char* const kSpecs[] = {"q8,chunk:4096", "q8,huffman,chunk:4096", "topk:0.05,q8,huffman,chunk:4096",
                              "topk:0.05,chunk:4096", "topk:0.3,q8,chunk:4096"};

std::vector<uint8_t> message(const char* spec, size_t n = 9000) {
  TypedBuffer in(dcFloat32, make_values(Dist::laplace, n, 2));
  return encode(parse_spec(spec), in);
}

std::string error_of(const std::vector<uint8_t>& msg, size_t n, std::vector<float>* dst = nullptr) {
  std::vector<float> local(n, 1.0f);
  std::vector<float>& out = dst ? *dst : local;
  try {
    decode_accumulate(msg, {dcFloat32, out.data(), n});
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), dcInvalidArgument);
    return e.what();
  }
  return "";
}

TEST(Corruption, EveryFlippedBitIsCaughtBeforeTheDestinationChanges) {
  for (const char* spec : kSpecs) {
    const std::vector<uint8_t> msg = message(spec);
    for (size_t pos = 0; pos < msg.size(); ++pos) {
      for (uint8_t bit : {uint8_t(1), uint8_t(0x80)}) {
        std::vector<uint8_t> bad = msg;
        bad[pos] ^= bit;
        std::vector<float> dst(9000, 1.0f);
        const std::string err = error_of(bad, 9000, &dst);
        ASSERT_FALSE(err.empty()) << spec << ": flip at byte " << pos << " decoded";
        ASSERT_EQ(dst, std::vector<float>(9000, 1.0f)) << spec << " byte " << pos;
      }
    }
  }
}

TEST(Corruption, TruncatedAndOversizedMessages) {
  for (const char* spec : kSpecs) {
    const std::vector<uint8_t> msg = message(spec);
    for (size_t len = 0; len < msg.size(); ++len) {
      const std::vector<uint8_t> cut(msg.begin(), msg.begin() + len);
      ASSERT_NE(error_of(cut, 9000).find("truncated"), std::string::npos) << spec << " " << len;
      // Piece-wise: the pieces so far decode fine; finish() reports the truncation.
      std::vector<float> dst(9000, 0.0f);
      PieceDecoder d({dcFloat32, dst.data(), 9000});
      d.consume(cut);
      EXPECT_FALSE(d.done());
      EXPECT_THROW(d.finish(), Error);
    }
    std::vector<uint8_t> longer = msg;
    longer.push_back(0);
    EXPECT_NE(error_of(longer, 9000).find("oversized"), std::string::npos);
    std::vector<float> dst(9000, 0.0f);
    PieceDecoder d({dcFloat32, dst.data(), 9000});
    try {
      d.consume(longer);
      ADD_FAILURE() << "extra byte accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("oversized"), std::string::npos) << e.what();
    }
    EXPECT_THROW(d.consume(std::span(msg).first(1)), Error);  // stays failed
  }
}

TEST(Corruption, MismatchedDestination) {
  const std::vector<uint8_t> msg = message("q8");
  std::vector<float> dst(9000);
  EXPECT_NE(error_of(msg, 8999).find("decoded into a buffer of 8999"), std::string::npos);
  EXPECT_THROW(decode_accumulate(msg, {dcFloat64, dst.data(), 9000}), Error);
  EXPECT_THROW(decode_accumulate(msg, {dcFloat32, nullptr, 9000}), Error);
}

// Forged fields with valid checksums: the structure checks name the problem.
std::string forged(std::vector<uint8_t> msg, size_t pos, uint8_t value) {
  msg[pos] = value;
  fuzz::reseal(msg);
  return error_of(msg, 9000);
}

TEST(Corruption, ForgedFieldsAreCaught) {
  const std::vector<uint8_t> dense = message("q8,chunk:4096");
  EXPECT_NE(forged(dense, 0, 'X').find("bad magic"), std::string::npos);
  EXPECT_NE(forged(dense, 4, 2).find("version 2"), std::string::npos);
  EXPECT_NE(forged(dense, 5, 0x40).find("unknown flags"), std::string::npos);
  EXPECT_NE(forged(dense, 6, 30).find("chunk of 2^30"), std::string::npos);
  EXPECT_NE(forged(dense, 17, 0x20).find("scale block"), std::string::npos);
  EXPECT_NE(forged(dense, 8, 0x29).find("decoded into a buffer"), std::string::npos);  // count 9001
  const MessageHeader h = MessageHeader::parse(std::span(dense).first(MessageHeader::header_bytes(dense)));
  const size_t c0 = h.chunk(0).byte_begin;
  EXPECT_NE(forged(dense, c0, 1).find("unknown kind"), std::string::npos);               // sparse chunk, dense message
  EXPECT_NE(forged(dense, c0 + 4, 0xff).find("scale"), std::string::npos);               // NaN scale
  EXPECT_NE(forged(dense, c0 + 1 + 64, 253).find("flagged finite"), std::string::npos);  // NaN symbol

  const std::vector<uint8_t> sparse = message("topk:0.05,chunk:4096");
  const MessageHeader hs = MessageHeader::parse(std::span(sparse).first(MessageHeader::header_bytes(sparse)));
  const size_t s0 = hs.chunk(0).byte_begin;
  EXPECT_NE(forged(sparse, s0 + 4, 0x10).find("kept elements"), std::string::npos);  // m huge
  EXPECT_NE(forged(sparse, s0 + 1 + 4 + 4 + 3, 0x7f).find("indices"), std::string::npos);

  const std::vector<uint8_t> coded = message("topk:0.05,q8,huffman,chunk:4096");
  const MessageHeader hc = MessageHeader::parse(std::span(coded).first(MessageHeader::header_bytes(coded)));
  std::vector<uint8_t> shifted = coded;
  wire::put_u32(shifted.data() + hc.header_size() - 16, wire::get_u32(shifted.data() + hc.header_size() - 16) + 1);
  fuzz::reseal(shifted);
  EXPECT_FALSE(error_of(shifted, 9000).empty());  // a chunk boundary moved by one byte
  EXPECT_NE(forged(coded, 33, 0xff).find("table"), std::string::npos);
}

}  // namespace
}  // namespace dc::compression::test
