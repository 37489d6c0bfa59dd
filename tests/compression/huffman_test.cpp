// Canonical length-limited Huffman codes: construction (optimal, limited, deterministic), the
// stored table, and the interleaved-stream coder on skewed, uniform, single-symbol and empty input.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <queue>
#include <random>

#include "base/error.h"
#include "compression/form/message_form.h"
#include "compression/form/wire_format.h"
#include "compression/huffman_table.h"
#include "tests/compression/test_support.h"

namespace dc::compression::test {
namespace {

uint64_t kraft(const HuffmanTable& t) {
  uint64_t sum = 0;
  for (unsigned s = 0; s < t.alphabet(); ++s)
    if (t.length(s)) sum += uint64_t(1) << (wire::kMaxCodeLength - t.length(s));
  return sum;
}

uint64_t coded_bits(const HuffmanTable& t, const uint32_t* counts) {
  uint64_t bits = 0;
  for (unsigned s = 0; s < t.alphabet(); ++s) bits += uint64_t(counts[s]) * t.length(s);
  return bits;
}

// Unlimited Huffman cost and depth, by the textbook merge of the two lightest.
std::pair<uint64_t, unsigned> huffman_cost(const std::vector<uint64_t>& w) {
  using Node = std::pair<uint64_t, unsigned>;  // weight, depth below
  std::priority_queue<Node, std::vector<Node>, std::greater<>> q;
  for (uint64_t x : w) q.push({x, 0});
  uint64_t cost = 0;
  while (q.size() > 1) {
    const Node a = q.top();
    q.pop();
    const Node b = q.top();
    q.pop();
    cost += a.first + b.first;
    q.push({a.first + b.first, std::max(a.second, b.second) + 1});
  }
  return {cost, q.top().second};
}

std::vector<uint8_t> skewed_symbols(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::geometric_distribution<int> geo(0.3);
  std::vector<uint8_t> s(n);
  for (auto& x : s) x = uint8_t(std::min(geo(rng), 200));
  return s;
}

// Encode through the public table and the kernels; decode back.
std::vector<uint8_t> round_trip(const std::vector<uint8_t>& symbols, Isa isa = Isa::best) {
  uint32_t counts[256] = {};
  for (uint8_t s : symbols) counts[s]++;
  const HuffmanTable table = HuffmanTable::build(counts, 256);
  const CodecKernels& k = codec_kernels(isa);
  const unsigned S = wire::streams_for(symbols.size());
  std::vector<std::vector<uint8_t>> streams(S);
  StreamsView view{};
  view.count = S;
  for (unsigned s = 0; s < S; ++s) {
    const uint64_t b = wire::segment_begin(symbols.size(), S, s), e = wire::segment_begin(symbols.size(), S, s + 1);
    streams[s].resize((e - b) * 11 / 8 + 16);
    const size_t n = k.huffman_encode(symbols.data() + b, e - b, table.codes(), streams[s].data(), streams[s].size());
    EXPECT_NE(n, SIZE_MAX);
    streams[s].resize(n);
    view.data[s] = streams[s].data();
    view.size[s] = n;
  }
  std::vector<uint8_t> out(symbols.size(), 0xee);
  if (table.kind() != HuffmanTable::Kind::empty) {
    EXPECT_TRUE(k.huffman_decode(view, table.decode_table(), out.data(), out.size()));
  }
  return out;
}

TEST(Huffman, SkewedCodeIsCompleteAndNearEntropy) {
  const std::vector<uint8_t> sym = skewed_symbols(100000, 1);
  uint32_t counts[256] = {};
  for (uint8_t s : sym) counts[s]++;
  const HuffmanTable t = HuffmanTable::build(counts, 256);
  ASSERT_EQ(t.kind(), HuffmanTable::Kind::coded);
  EXPECT_EQ(kraft(t), uint64_t(1) << wire::kMaxCodeLength);
  double entropy = 0;
  for (uint32_t c : counts)
    if (c) entropy -= c * std::log2(double(c) / sym.size());
  const double bits = double(coded_bits(t, counts));
  EXPECT_GE(bits, entropy);
  EXPECT_LE(bits, entropy + 0.05 * sym.size());  // within 0.05 bit per symbol here
  EXPECT_EQ(round_trip(sym), sym);
}

TEST(Huffman, OptimalWhereTheLimitDoesNotBind) {
  std::mt19937_64 rng(7);
  int compared = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 2 + rng() % 60;
    std::vector<uint64_t> w(n);
    for (auto& x : w) x = 1 + rng() % 1000;
    const auto [best, depth] = huffman_cost(w);
    const std::vector<uint8_t> len = package_merge(w, 11);
    uint64_t cost = 0;
    for (size_t i = 0; i < n; ++i) cost += w[i] * len[i];
    if (depth > 11) {
      EXPECT_GE(cost, best);  // the limit binds: no better than unlimited
      continue;
    }
    EXPECT_EQ(cost, best) << "trial " << trial;
    ++compared;
  }
  EXPECT_GT(compared, 150);
}

TEST(Huffman, LengthLimitIsRespected) {
  // Fibonacci weights: an unlimited Huffman code would be 39 deep.
  std::vector<uint32_t> counts(256, 0);
  uint32_t a = 1, b = 1;
  for (int s = 0; s < 40; ++s) {
    counts[s] = a;
    const uint32_t c = a + b;
    a = b;
    b = c;
  }
  const HuffmanTable t = HuffmanTable::build(counts.data(), 256);
  unsigned longest = 0;
  for (int s = 0; s < 40; ++s) {
    EXPECT_GE(t.length(s), 1u);
    longest = std::max(longest, t.length(s));
  }
  EXPECT_EQ(longest, wire::kMaxCodeLength);
  EXPECT_EQ(kraft(t), uint64_t(1) << wire::kMaxCodeLength);
  // Heavier symbols never get longer codes.
  for (int s = 1; s < 40; ++s) EXPECT_LE(t.length(s), t.length(s - 1));
  std::vector<uint8_t> sym;
  for (int s = 0; s < 40; ++s) sym.insert(sym.end(), std::min<uint32_t>(counts[s], 2000), uint8_t(s));
  std::shuffle(sym.begin(), sym.end(), std::mt19937_64(3));
  EXPECT_EQ(round_trip(sym), sym);
}

TEST(Huffman, UniformSymbolsTakeEightBits) {
  std::vector<uint8_t> sym(256 * 64);
  for (size_t i = 0; i < sym.size(); ++i) sym[i] = uint8_t(i * 97);
  uint32_t counts[256] = {};
  for (uint8_t s : sym) counts[s]++;
  const HuffmanTable t = HuffmanTable::build(counts, 256);
  for (unsigned s = 0; s < 256; ++s) EXPECT_EQ(t.length(s), 8u);
  EXPECT_EQ(round_trip(sym), sym);
}

TEST(Huffman, SingleSymbolCostsNoBits) {
  const std::vector<uint8_t> sym(5000, 42);
  uint32_t counts[256] = {};
  counts[42] = 5000;
  const HuffmanTable t = HuffmanTable::build(counts, 256);
  EXPECT_EQ(t.kind(), HuffmanTable::Kind::single);
  EXPECT_EQ(t.codes()[42] >> 16, 0u);
  std::vector<uint8_t> out(8);
  EXPECT_EQ(codec_kernels().huffman_encode(sym.data(), sym.size(), t.codes(), out.data(), out.size()), 0u);
  EXPECT_EQ(round_trip(sym), sym);
}

TEST(Huffman, EmptyInput) {
  uint32_t counts[256] = {};
  const HuffmanTable t = HuffmanTable::build(counts, 256);
  EXPECT_EQ(t.kind(), HuffmanTable::Kind::empty);
  uint8_t buf[max_table_bytes(256) + 8];
  EXPECT_EQ(t.write(buf), 1u);
  size_t used = 0;
  EXPECT_EQ(HuffmanTable::read(buf, 1, 256, &used).kind(), HuffmanTable::Kind::empty);
  EXPECT_EQ(round_trip({}), std::vector<uint8_t>{});
}

TEST(Huffman, OddCountsAndStreamBoundaries) {
  for (size_t n : {1, 2, 3, 5, 1023, 1024, 1025, 4099, 65536}) {
    const std::vector<uint8_t> sym = skewed_symbols(n, n);
    EXPECT_EQ(round_trip(sym), sym) << n;
  }
}

TEST(Huffman, StoredTableReadsBackAndIsSmall) {
  const std::vector<uint8_t> sym = skewed_symbols(20000, 5);
  uint32_t counts[256] = {};
  for (uint8_t s : sym) counts[s]++;
  const HuffmanTable t = HuffmanTable::build(counts, 256);
  uint8_t buf[max_table_bytes(256) + 8];
  const size_t n = t.write(buf);
  size_t used = 0;
  const HuffmanTable back = HuffmanTable::read(buf, n, 256, &used);
  EXPECT_EQ(used, n);
  for (unsigned s = 0; s < 256; ++s) EXPECT_EQ(back.length(s), t.length(s));
  unsigned used_symbols = 0;
  for (unsigned s = 0; s < 256; ++s) used_symbols += t.length(s) != 0;
  // Lengths of neighbouring symbols differ little: about two bits per symbol in range.
  EXPECT_LE(n, 3 + used_symbols / 2 + 8) << used_symbols << " symbols";
  EXPECT_LE(max_table_bytes(256), 195u);
}

TEST(Huffman, MalformedTablesAreRejected) {
  uint8_t buf[4] = {3, 0, 0, 0};  // kind 3
  size_t used = 0;
  EXPECT_THROW(HuffmanTable::read(buf, 4, 256, &used), Error);
  // A coded table whose single code length does not make a complete code.
  uint32_t counts[256] = {};
  counts[1] = 10;
  counts[2] = 20;
  const HuffmanTable t = HuffmanTable::build(counts, 256);
  uint8_t good[max_table_bytes(256) + 8];
  const size_t n = t.write(good);
  EXPECT_NO_THROW(HuffmanTable::read(good, n, 256, &used));
  EXPECT_THROW(HuffmanTable::read(good, n - 1, 256, &used), Error);  // runs past its section
  EXPECT_THROW(HuffmanTable::read(good, n, 2, &used), Error);        // symbol outside the alphabet
}

TEST(Huffman, StreamsThatDoNotEndExactlyAreRejected) {
  // 1000 symbols: one stream (below the four-stream threshold).
  const std::vector<uint8_t> sym = skewed_symbols(1000, 9);
  uint32_t counts[256] = {};
  for (uint8_t s : sym) counts[s]++;
  const HuffmanTable t = HuffmanTable::build(counts, 256);
  const CodecKernels& k = codec_kernels();
  std::vector<uint8_t> stream(sym.size() * 2);
  stream.resize(k.huffman_encode(sym.data(), sym.size(), t.codes(), stream.data(), stream.size()));
  std::vector<uint8_t> out(sym.size());
  auto decodes = [&](const std::vector<uint8_t>& bytes) {
    StreamsView v{};
    v.count = 1;
    v.data[0] = bytes.data();
    v.size[0] = bytes.size();
    return k.huffman_decode(v, t.decode_table(), out.data(), out.size());
  };
  EXPECT_TRUE(decodes(stream));
  EXPECT_EQ(out, sym);
  std::vector<uint8_t> longer = stream;
  longer.push_back(0);
  EXPECT_FALSE(decodes(longer));
  EXPECT_FALSE(decodes(std::vector<uint8_t>(stream.begin(), stream.end() - 1)));
}

}  // namespace
}  // namespace dc::compression::test
