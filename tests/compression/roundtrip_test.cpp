// Every spec and datatype through encode and decode: what arrives is what the spec promises
// (all elements within the q8 bound, or the top-k within it), whole-message, chunk-by-chunk and
// piece-wise decoding agree, and the ratios are what the codecs should reach.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>

#include "tests/compression/test_support.h"

namespace dc::compression::test {
namespace {

const char* const kSpecs[] = {"q8",
                              "q8:stochastic",
                              "q8,huffman",
                              "q8:stochastic:64,huffman",
                              "q8,ef",
                              "q8,huffman,ef:0.9",
                              "topk:0.01",
                              "topk:0.01,q8",
                              "topk:0.01,huffman",
                              "topk:0.01,q8,huffman",
                              "topk:0.001,q8,huffman,ef",
                              "topk:0.01:sampled,q8,huffman,ef",
                              "topk:0.01:sampled,q8:stochastic,huffman",
                              "topk:0.3,q8,huffman",
                              "topk:0.3",
                              "topk:1,q8",
                              "auto",
                              "auto,ef:0.5",
                              "q8,chunk:4096",
                              "topk:0.05,q8,huffman,chunk:4096"};
const dcDataType_t kTypes[] = {dcFloat32, dcFloat16, dcBfloat16};
const size_t kCounts[] = {0, 1, 1000, 65536 + 17, 300000};

struct Case {
  std::string spec;
  dcDataType_t type;
  size_t count;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const char* s : kSpecs)
    for (dcDataType_t t : kTypes)
      for (size_t n : kCounts) cases.push_back({s, t, n});
  return cases;
}

class RoundTrip : public ::testing::TestWithParam<Case> {};

// Decoded values against the input: error within the q8 bound of its block (dense) or of its
// chunk's largest kept value (sparse, a looser bound), nothing outside the top-k.
void check_values(const Spec& applied, const std::vector<float>& x, const std::vector<float>& dec) {
  const size_t n = x.size();
  const size_t chunk = size_t(1) << applied.chunk_log2;
  const double slack = 1.0 + 1e-4;  // t = a * (126 / max) is rounded: a near-tie may round the other way
  if (!applied.sparse()) {
    const double factor = applied.rounding == Rounding::nearest ? 0.5 : 1.0;
    for (size_t c0 = 0; c0 < n; c0 += chunk) {
      for (size_t b0 = c0; b0 < std::min(n, c0 + chunk); b0 += applied.block) {
        const size_t b1 = std::min({n, c0 + chunk, b0 + applied.block});
        float m = 0;
        for (size_t i = b0; i < b1; ++i) m = std::max(m, std::fabs(x[i]));
        const double bound = factor * m / 126.0 * slack + 1e-30;
        for (size_t i = b0; i < b1; ++i) ASSERT_LE(std::fabs(double(dec[i]) - x[i]), bound) << "element " << i;
      }
    }
    return;
  }
  const std::vector<uint32_t> kept = reference_topk(x, kept_target(applied.fraction, n));
  std::vector<char> is_kept(n, 0);
  for (uint32_t i : kept) is_kept[i] = 1;
  for (size_t c0 = 0; c0 < n; c0 += chunk) {
    float m = 0;
    for (size_t i = c0; i < std::min(n, c0 + chunk); ++i)
      if (is_kept[i]) m = std::max(m, std::fabs(x[i]));
    const double bound = applied.q8 ? m / 126.0 * slack + 1e-30 : 0.0;
    for (size_t i = c0; i < std::min(n, c0 + chunk); ++i) {
      if (is_kept[i]) ASSERT_LE(std::fabs(double(dec[i]) - x[i]), bound) << "kept element " << i;
      else ASSERT_EQ(dec[i], 0.0f) << "element " << i << " was not among the top-k";
    }
  }
}

TEST_P(RoundTrip, DecodesWhatTheSpecPromises) {
  const Case& c = GetParam();
  const Spec spec = parse_spec(c.spec);
  TypedBuffer in(c.type, make_values(Dist::laplace, c.count, c.count + 1));
  const std::vector<float> x = in.floats();
  Residual residual(c.count);
  EncodeResult r;
  const std::vector<uint8_t> msg = encode(spec, in, spec.error_feedback ? &residual : nullptr, 7, Isa::best, &r);
  ASSERT_LE(msg.size(), max_message_bytes(spec, c.count));
  const std::vector<float> dec = decode(msg, c.count);
  check_values(r.applied, x, dec);

  // Chunk by chunk, last chunk first, into the destination type.
  const MessageHeader h = MessageHeader::parse(std::span(msg).first(MessageHeader::header_bytes(msg)));
  TypedBuffer out(c.type, std::vector<float>(c.count, 0.0f));
  ChunkDecoder chunks;
  for (uint32_t i = h.chunk_count(); i-- > 0;) {
    const auto info = h.chunk(i);
    chunks.decode_accumulate(h, i, std::span(msg).subspan(info.byte_begin, info.byte_end - info.byte_begin),
                             {c.type, out.data(), c.count});
  }
  TypedBuffer expect(c.type, dec);  // 0 + v rounded to the type
  EXPECT_EQ(out.bytes, expect.bytes);

  // Piece-wise, in random piece sizes, matches the whole-message decode bit for bit.
  std::vector<float> pieces(c.count, 0.0f);
  PieceDecoder d({dcFloat32, pieces.data(), c.count});
  std::mt19937 rng(unsigned(c.count));
  for (size_t pos = 0; pos < msg.size();) {
    const size_t n = std::min(msg.size() - pos, size_t(1 + rng() % 40000));
    d.consume(std::span(msg).subspan(pos, n));
    pos += n;
  }
  EXPECT_TRUE(d.done());
  EXPECT_NO_THROW(d.finish());
  EXPECT_TRUE(std::equal(pieces.begin(), pieces.end(), dec.begin(), dec.end(),
                         [](float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }));
}

INSTANTIATE_TEST_SUITE_P(AllSpecs, RoundTrip, ::testing::ValuesIn(all_cases()), [](const auto& info) {
  std::string name = info.param.spec + "_" + type_name(info.param.type) + "_" + std::to_string(info.param.count);
  for (char& ch : name)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
});

double ratio(const char* spec, const std::vector<float>& x, EncodeResult* r = nullptr) {
  TypedBuffer in(dcFloat32, x);
  const std::vector<uint8_t> msg = encode(parse_spec(spec), in, nullptr, 1, Isa::best, r);
  return double(4 * x.size()) / double(msg.size());
}

TEST(Ratio, WhatEachCodecReaches) {
  const std::vector<float> x = make_values(Dist::normal, 1 << 20, 3);
  EXPECT_NEAR(ratio("q8", x), 4.0 * 256 / 260, 0.01);
  // ~7.6 bits per value: a block of 256 normals has its max near 2.8 sigma, steps of 0.022 sigma
  EXPECT_GT(ratio("q8,huffman", x), 4.1);
  EXPECT_GT(ratio("topk:0.01,q8,huffman", x), 150);
  EncodeResult r;
  const double thousand = ratio("topk:0.001,q8,huffman", x, &r);
  EXPECT_GT(thousand, 1000);
  EXPECT_EQ(r.sent, 1049u);
  EXPECT_LT(32.0 * double(x.size()) / thousand / double(r.sent), 32.0);  // bits per kept element
  EXPECT_NEAR(ratio("topk:0.01", x), 100.0 / 2, 1);                      // u32 index + f32 value
}

TEST(Ratio, SparseNeverCostsMuchMoreThanDense) {
  // Half the elements kept: every chunk goes dense, so the message is no bigger than q8's.
  const std::vector<float> x = make_values(Dist::normal, 200000, 4);
  EXPECT_GE(ratio("topk:0.5,q8,huffman", x), ratio("q8,huffman", x));
  EXPECT_NEAR(ratio("topk:0.5", x), 1.0, 0.01);
}

TEST(Auto, PicksByConcentrationAndSaysWhy) {
  EncodeResult r;
  ratio("auto", make_values(Dist::lognormal, 100000, 5), &r);
  EXPECT_EQ(r.applied.selection, Selection::topk_sampled) << r.reason;
  EXPECT_NE(r.reason.find("top-k"), std::string::npos);
  ratio("auto", make_values(Dist::normal, 100000, 5), &r);
  EXPECT_EQ(r.applied.selection, Selection::dense) << r.reason;
  EXPECT_NE(r.reason.find("q8: the largest 1%"), std::string::npos) << r.reason;
  // Uniform magnitudes: q8 cannot compress them much; with error feedback auto sparsifies.
  std::vector<float> flat(100000);
  std::mt19937 rng(1);
  for (float& v : flat) v = float(int(rng() % 2001) - 1000) * 1e-6f;
  TypedBuffer in(dcFloat32, flat);
  Residual residual(flat.size());
  encode(parse_spec("auto,ef"), in, &residual, 1, Isa::best, &r);
  EXPECT_EQ(r.applied.selection, Selection::topk_sampled) << r.reason;
  EXPECT_NE(r.reason.find("flat magnitudes"), std::string::npos) << r.reason;
}

TEST(Determinism, SameInputSameBytes) {
  for (const char* s : kSpecs) {
    const Spec spec = parse_spec(s);
    TypedBuffer in(dcFloat32, make_values(Dist::laplace, 150000, 11));
    Residual r1(150000), r2(150000);
    const auto a = encode(spec, in, spec.error_feedback ? &r1 : nullptr, 99);
    const auto b = encode(spec, in, spec.error_feedback ? &r2 : nullptr, 99);
    EXPECT_EQ(a, b) << s;
    EXPECT_EQ(std::memcmp(r1.data(), r2.data(), 4 * 150000), 0) << s;
  }
}

}  // namespace
}  // namespace dc::compression::test

namespace dc::compression::test {
namespace {

// Found by fuzz_roundtrip: every kept element in dense chunks leaves the gap table empty, and a
// sparse chunk with nothing kept must still decode.
TEST(RoundTripEdge, SparseChunkWithNothingKeptAndAnEmptyGapTable) {
  std::vector<float> x(5000, 1e-6f);
  for (size_t i = 0; i < 4096; ++i) x[i] = 1.0f + float(i) * 1e-4f;
  TypedBuffer in(dcFloat32, x);
  const std::vector<uint8_t> msg = encode(parse_spec("topk:0.3,q8,huffman,chunk:4096"), in);
  const std::vector<float> dec = decode(msg, x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const bool kept = i >= 4096 - 1500 && i < 4096;
    ASSERT_NEAR(dec[i], kept ? x[i] : 0.0f, 1.5f / 252) << i;
  }
}

}  // namespace
}  // namespace dc::compression::test
