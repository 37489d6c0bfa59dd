// The GPU decoder's kernels (compression/gpu/dense_decode.h), run through the emulator, against
// the CPU decoder (issue 31): the same bits in float32, float16 and bfloat16 targets, added or
// written, for dense messages of every spec, block and chunk size; and the same refusal, word for
// word, of flipped, truncated, oversized, forged and mismatched messages, sparse ones included
// (the device refuses those once their header and checksums passed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>

#include "compression/gpu/dense_decode.h"
#include "tests/compression/test_support.h"
#include "tests/fuzz/compression/decode_parity.h"
#include "tests/fuzz/compression/reseal.h"

namespace dc::compression::test {
namespace {

using fuzz::compare_decoders;
using fuzz::DecodeCase;
using kernels::EmulatorMode;
using kernels::GridShape;

constexpr GridShape kGrids[] = {{1, 1}, {3, 5}};
constexpr dcDataType_t kTypes[] = {dcFloat32, dcFloat16, dcBfloat16};

enum class Input { heavy_tailed, mostly_zeros, constant, nonfinite, denormal };
constexpr Input kInputs[] = {Input::heavy_tailed, Input::mostly_zeros, Input::constant, Input::nonfinite,
                             Input::denormal};

std::vector<float> make_input(Input kind, size_t n, uint64_t seed) {
  std::vector<float> v = make_values(Dist::lognormal, n, seed);
  const float inf = std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n; ++i) {
    switch (kind) {
      case Input::heavy_tailed: break;
      case Input::mostly_zeros: v[i] = i % 37 == 5 ? v[i] : 0.0f; break;
      case Input::constant: v[i] = 0.375f; break;
      case Input::nonfinite:
        if (i % 101 == 3) v[i] = std::nanf("");
        if (i % 211 == 7) v[i] = inf;
        if (i % 307 == 11) v[i] = -inf;
        break;
      case Input::denormal:  // float32 denormals among values in float16's denormal range
        v[i] = i % 3 == 0 ? v[i] * 1e-36f : v[i] * 1e-3f;
        break;
    }
  }
  return v;
}

// What the decoders add to: gradient-like values of `type` (denormals and zeros among them).
std::vector<uint8_t> target_of(dcDataType_t type, size_t count, uint64_t seed) {
  std::vector<float> v = make_values(Dist::laplace, count, seed, 0.01f);
  for (size_t i = 0; i < count; i += 17) v[i] = i % 2 ? 0.0f : 1e-39f;
  return TypedBuffer(type, v).bytes;
}

std::vector<uint8_t> encode_message(const Spec& spec, const std::vector<float>& values, uint64_t seed) {
  TypedBuffer in(dcFloat32, values);
  Residual residual(values.size());
  return encode(spec, in, spec.error_feedback ? &residual : nullptr, seed);
}

std::vector<uint8_t> encode_message(const char* spec, size_t n, uint64_t seed = 2) {
  return encode_message(parse_spec(spec), make_input(Input::heavy_tailed, n, seed), seed);
}

// The message's count of elements (the target's, unless a test says otherwise).
uint64_t count_of(std::span<const uint8_t> msg) { return msg.size() >= 16 ? wire::get_u64(msg.data() + 8) : 0; }

DecodeCase case_of(std::span<const uint8_t> msg, dcDataType_t type = dcFloat32, bool overwrite = false) {
  const uint64_t count = count_of(msg);
  return {msg, type, count, overwrite, target_of(type, count <= (1u << 20) ? count : 0, 3)};
}

// Expects the two decoders to agree on `c`; returns the CPU decoder's error (empty: it added it).
std::string expect_agreement(const DecodeCase& c, GridShape grid, const std::string& what,
                             EmulatorMode mode = EmulatorMode::Sequential) {
  const fuzz::DecoderComparison r = compare_decoders(c, grid, mode);
  EXPECT_EQ(r.difference, "") << what;
  return r.cpu_error;
}

TEST(GpuDecode, AddsTheCpuDecodersBits) {
  struct SpecText {
    const char* q8;  // the block size follows
    const char* rest;
  };
  const SpecText specs[] = {{"q8", ""}, {"q8", ",huffman"}, {"q8:stochastic", ",huffman,ef"}};
  const size_t lengths[] = {0, 1, 4095, 4097, 70000};
  size_t decodes = 0;
  for (const SpecText& text : specs) {
    for (const char* block : {":16", ":256", ":4096", ":100"}) {
      for (const char* chunk : {"", ",chunk:4096"}) {
        const Spec spec = parse_spec(std::string(text.q8) + block + text.rest + chunk);
        for (Input input : kInputs) {
          for (size_t n : lengths) {
            const std::vector<uint8_t> msg = encode_message(spec, make_input(input, n, n + 11), n);
            for (dcDataType_t type : kTypes) {
              for (bool overwrite : {false, true}) {
                const std::string what = spec.to_string() + " input " + std::to_string(int(input)) + " n " +
                                         std::to_string(n) + " " + type_name(type) + (overwrite ? " overwrite" : "");
                const std::string error = expect_agreement(case_of(msg, type, overwrite), kGrids[decodes++ % 2], what);
                ASSERT_EQ(error, "") << what;
              }
            }
          }
        }
      }
    }
  }
}

TEST(GpuDecode, AnEmulatedThreadPerGpuThreadGivesTheSameBits) {
  for (const char* spec : {"q8:64,huffman,chunk:4096", "q8:100,chunk:4096"}) {
    std::vector<uint8_t> msg = encode_message(spec, 9000);
    EXPECT_EQ(expect_agreement(case_of(msg, dcFloat16), {2, 3}, spec, EmulatorMode::Threads), "");
    msg[msg.size() - 100] ^= 4;
    fuzz::reseal(msg);
    expect_agreement(case_of(msg, dcBfloat16, true), {2, 3}, spec, EmulatorMode::Threads);
  }
}

// Two chunks: 4096 elements (four streams with huffman) and 904 (one stream).
const char* const kRefusalSpecs[] = {"q8:64,chunk:4096", "q8:stochastic:100,huffman,chunk:4096",
                                     "topk:0.05,q8,huffman,chunk:4096", "topk:0.05,chunk:4096"};
constexpr size_t kRefusalCount = 5000;

TEST(GpuDecode, RefusesEveryFlippedBitAsTheCpuDoes) {
  for (const char* spec : kRefusalSpecs) {
    const std::vector<uint8_t> msg = encode_message(spec, kRefusalCount);
    for (size_t pos = 0; pos < msg.size(); ++pos) {
      for (bool resealed : {false, true}) {
        std::vector<uint8_t> bad = msg;
        bad[pos] ^= uint8_t(1u << (pos % 8));
        if (resealed) fuzz::reseal(bad);
        const std::string what = std::string(spec) + " byte " + std::to_string(pos) + (resealed ? " resealed" : "");
        const std::string error = expect_agreement(case_of(bad), kGrids[pos % 2], what);
        ASSERT_TRUE(resealed || !error.empty()) << what << " decoded";
      }
    }
  }
}

TEST(GpuDecode, RefusesTruncatedAndOversizedMessagesAsTheCpuDoes) {
  for (const char* spec : kRefusalSpecs) {
    const std::vector<uint8_t> msg = encode_message(spec, kRefusalCount);
    for (size_t len = 0; len <= msg.size() + 9; ++len) {
      std::vector<uint8_t> cut(msg.begin(), msg.begin() + std::min(len, msg.size()));
      cut.resize(len, 0);
      DecodeCase c = case_of(cut);
      c.count = kRefusalCount;
      c.target = target_of(dcFloat32, kRefusalCount, 3);
      const std::string error =
          expect_agreement(c, kGrids[len % 2], std::string(spec) + " length " + std::to_string(len));
      EXPECT_TRUE(len == msg.size() || !error.empty()) << spec << " length " << len << " decoded";
    }
  }
}

TEST(GpuDecode, RefusesMismatchedTargetsAsTheCpuDoes) {
  for (const char* spec : {"q8,huffman,chunk:4096", "topk:0.05,q8,huffman,chunk:4096"}) {
    std::vector<uint8_t> msg = encode_message(spec, kRefusalCount);
    std::vector<uint8_t> bad_magic = msg;
    bad_magic[0] ^= 1;
    std::vector<uint8_t> bad_chunk = msg;
    bad_chunk.back() ^= 1;
    std::vector<uint8_t> empty = encode_message(spec, 0);
    for (const std::vector<uint8_t>* m : {&msg, &bad_magic, &bad_chunk, &empty}) {
      for (dcDataType_t type : {dcFloat32, dcFloat64, dcInt8, dcFloat8e4m3, dcDataType_t(99)}) {
        for (int64_t delta : {-1, 0, 1}) {
          DecodeCase c = case_of(*m, type);
          c.count = count_of(msg) + delta;
          c.target.resize(8 * (c.count + 1));
          expect_agreement(c, kGrids[0], std::string(spec) + " datatype " + std::to_string(type));
          c.target.clear();  // a null destination
          expect_agreement(c, kGrids[1], std::string(spec) + " null, datatype " + std::to_string(type));
        }
      }
    }
    DecodeCase nothing = case_of(empty);
    nothing.target.clear();
    EXPECT_EQ(expect_agreement(nothing, kGrids[1], "no elements into null"), "");
  }
}

// Every byte of the header and the chunk table set to values around its own, with the checksums
// recomputed, so that each check behind them is reached.
TEST(GpuDecode, RefusesForgedHeadersAsTheCpuDoes) {
  for (const char* spec : kRefusalSpecs) {
    const std::vector<uint8_t> msg = encode_message(spec, kRefusalCount);
    const size_t header = MessageHeader::header_bytes(msg);
    for (size_t pos = 0; pos < header; ++pos) {
      for (int value : {0, 0xff, msg[pos] + 1, msg[pos] - 1, msg[pos] ^ 0x80}) {
        std::vector<uint8_t> bad = msg;
        bad[pos] = uint8_t(value);
        fuzz::reseal(bad);
        expect_agreement(case_of(bad, dcFloat16), kGrids[pos % 2],
                         std::string(spec) + " byte " + std::to_string(pos) + " = " + std::to_string(value));
      }
    }
  }
}

// A chunk's fields: its kind, scales, stream sizes, symbols and padding, resealed.
TEST(GpuDecode, RefusesForgedChunksAsTheCpuDoes) {
  for (const char* spec : {"q8:64,chunk:4096", "q8:100,huffman,chunk:4096"}) {
    const std::vector<uint8_t> msg = encode_message(spec, kRefusalCount);
    const MessageHeader h = MessageHeader::parse(std::span(msg).first(MessageHeader::header_bytes(msg)));
    auto forged = [&](uint32_t chunk, size_t offset, std::initializer_list<uint8_t> bytes, const std::string& what) {
      std::vector<uint8_t> bad = msg;
      size_t pos = h.chunk(chunk).byte_begin + offset;
      for (uint8_t b : bytes) bad[pos++] = b;
      fuzz::reseal(bad);
      return expect_agreement(case_of(bad), kGrids[chunk % 2],
                              std::string(spec) + " chunk " + std::to_string(chunk) + " " + what);
    };
    for (uint32_t c = 0; c < h.chunk_count(); ++c) {
      const uint32_t blocks = uint32_t(wire::div_ceil(h.chunk(c).elems, h.form().block));
      for (uint8_t kind : {1, 2, 0xff}) EXPECT_NE(forged(c, 0, {kind}, "kind"), "");
      for (uint32_t b : {0u, blocks / 2, blocks - 1}) {
        EXPECT_NE(forged(c, 1 + 4 * b + 3, {0xff}, "negative scale"), "");  // sign and exponent bits
        EXPECT_NE(forged(c, 1 + 4 * b, {0, 0, 0x80, 0x7f}, "infinite scale"), "");
        EXPECT_NE(forged(c, 1 + 4 * b, {0, 0, 0xc0, 0x7f}, "NaN scale"), "");
        EXPECT_NE(forged(c, 1 + 4 * b, {0xff, 0xff, 0x7f, 0x7f}, "scale overflowing times 126"), "");
      }
      const size_t values = 1 + 4 * size_t(blocks);
      const size_t size = h.chunk(c).byte_end - h.chunk(c).byte_begin;
      for (size_t at : {values, values + 1, values + 4, values + 12, (values + size) / 2, size - 1})
        for (uint8_t v : {0, 0xfd, 0xff}) forged(c, at, {v}, "byte " + std::to_string(at) + " = " + std::to_string(v));
      if (h.form().huffman && h.chunk(c).elems >= 1024) {  // stream sizes: short, long, past the chunk
        const uint32_t first = wire::get_u32(msg.data() + h.chunk(c).byte_begin + values);
        for (uint32_t s : {first - 1, first + 1, 0u, uint32_t(size), 0xffffffffu}) {
          uint8_t b[4];
          wire::put_u32(b, s);
          EXPECT_NE(forged(c, values, {b[0], b[1], b[2], b[3]}, "stream size " + std::to_string(s)), "");
        }
        // Stream 0 one byte long and stream 2 past the chunk: the CPU checks every size first.
        std::vector<uint8_t> bad = msg;
        uint8_t* sizes = bad.data() + h.chunk(c).byte_begin + values;
        wire::put_u32(sizes, first + 1);
        wire::put_u32(sizes + 8, 0x7fffffff);
        fuzz::reseal(bad);
        EXPECT_NE(expect_agreement(case_of(bad), kGrids[1], "two faults").find("runs past"), std::string::npos);
      }
    }
  }
}

// The message with another value table (the first of its tables, as in a dense message), the
// offsets behind it moved and the checksums recomputed.
std::vector<uint8_t> with_value_table(const std::vector<uint8_t>& msg, std::span<const uint8_t> table) {
  const MessageHeader h = MessageHeader::parse(std::span(msg).first(MessageHeader::header_bytes(msg)));
  const size_t chunk_table = h.header_size() - wire::kChunkEntryBytes * h.chunk_count();
  const int64_t moved = int64_t(table.size()) - int64_t(chunk_table - wire::kFixedHeaderBytes);
  std::vector<uint8_t> out(msg.size() + moved);
  std::copy(msg.begin(), msg.begin() + wire::kFixedHeaderBytes, out.begin());
  std::copy(table.begin(), table.end(), out.begin() + wire::kFixedHeaderBytes);
  std::copy(msg.begin() + chunk_table, msg.end(), out.begin() + wire::kFixedHeaderBytes + table.size());
  wire::put_u32(out.data() + 20, uint32_t(h.header_size() + moved));
  wire::put_u32(out.data() + 24, uint32_t(h.message_bytes() + moved));
  for (uint32_t c = 0; c < h.chunk_count(); ++c) {
    uint8_t* end = out.data() + chunk_table + moved + wire::kChunkEntryBytes * c;
    wire::put_u32(end, uint32_t(wire::get_u32(end) + moved));
  }
  fuzz::reseal(out);
  return out;
}

TEST(GpuDecode, RefusesForgedTablesAsTheCpuDoes) {
  const std::vector<uint8_t> msg = encode_message("q8:64,huffman,chunk:4096", kRefusalCount);
  gpu::CodeLengths flat;  // 8 bits for every symbol
  flat.kind = gpu::CodeKind::coded;
  std::fill(std::begin(flat.lengths), std::end(flat.lengths), uint8_t(8));
  gpu::CodeLengths single;
  single.kind = gpu::CodeKind::single;
  uint8_t table[gpu::kMaxStoredTableBytes];
  const size_t flat_bytes = gpu::write_code(flat, wire::kValueAlphabet, table);
  EXPECT_NE(expect_agreement(case_of(with_value_table(msg, std::span(table, flat_bytes))), kGrids[1], "8-bit code"),
            "");
  const size_t single_bytes = gpu::write_code(single, wire::kValueAlphabet, table);
  EXPECT_NE(expect_agreement(case_of(with_value_table(msg, std::span(table, single_bytes))), kGrids[0], "one symbol"),
            "");
  const uint8_t empty[1] = {};
  EXPECT_NE(expect_agreement(case_of(with_value_table(msg, empty)), kGrids[1], "no symbol").find("empty value table"),
            std::string::npos);
}

// A message of one chunk cut to `size` bytes (the header saying so), resealed.
std::vector<uint8_t> with_chunk_size(std::vector<uint8_t> msg, size_t size) {
  const size_t h = MessageHeader::header_bytes(msg);
  msg.resize(h + size);
  wire::put_u32(msg.data() + 24, uint32_t(msg.size()));
  wire::put_u32(msg.data() + h - wire::kChunkEntryBytes, uint32_t(msg.size()));
  fuzz::reseal(msg);
  return msg;
}

TEST(GpuDecode, RefusesShortChunksAsTheCpuDoes) {
  for (const char* spec : {"q8:64,chunk:4096", "q8:64,huffman,chunk:4096"}) {
    const std::vector<uint8_t> msg = encode_message(spec, 3000);  // one chunk, four streams, 47 scales
    for (size_t size = 1; size < 1 + 4 * 47 + 20; ++size)
      EXPECT_NE(expect_agreement(case_of(with_chunk_size(msg, size)), kGrids[size % 2],
                                 std::string(spec) + " chunk of " + std::to_string(size) + " bytes"),
                "");
  }
}

// Random bytes of random messages set to random values, resealed or not, sparse messages
// included: the first fault the CPU finds is the one the device reports.
TEST(GpuDecode, RefusesRandomForgeriesAsTheCpuDoes) {
  const char* const specs[] = {"q8:16,chunk:4096",           "q8,huffman,chunk:4096",
                               "q8:stochastic:4096,huffman", "topk:0.05,q8,huffman,chunk:4096",
                               "topk:0.3,q8,chunk:4096",     "topk:0.05,chunk:4096"};
  std::mt19937_64 rng(31);
  size_t refused = 0, added = 0;
  for (int round = 0; round < 3000; ++round) {
    const char* spec = specs[round % std::size(specs)];
    const Input input = kInputs[round % std::size(kInputs)];
    std::vector<uint8_t> msg = encode_message(parse_spec(spec), make_input(input, 1 + rng() % 9000, round), round);
    for (int k = 1 + int(rng() % 3); k > 0; --k) msg[rng() % msg.size()] = uint8_t(rng());
    if (rng() % 4) fuzz::reseal(msg);
    const dcDataType_t type = kTypes[rng() % 3];
    const std::string error = expect_agreement(case_of(msg, type, rng() % 2), kGrids[round % 2],
                                               std::string(spec) + " round " + std::to_string(round));
    ++(error.empty() ? added : refused);
  }
  EXPECT_GT(refused, 1000u);
  EXPECT_GT(added, 100u);
}

TEST(GpuDecode, RefusesSparseMessagesAfterTheirHeaderAndChecksums) {
  const std::string refusal = decode_error_message({gpu::DecodeFault::sparse_on_device});
  for (const char* spec : {"topk:0.05,q8,huffman,chunk:4096", "topk:0.01,chunk:4096"}) {
    std::vector<uint8_t> msg = encode_message(spec, kRefusalCount);
    std::vector<float> dst(kRefusalCount, 1.0f);
    try {
      gpu::decode_accumulate_emulated(msg, {dcFloat32, dst.data(), kRefusalCount});
      ADD_FAILURE() << spec << " decoded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), dcInvalidArgument);
      EXPECT_EQ(e.what(), refusal);
    }
    EXPECT_EQ(dst, std::vector<float>(kRefusalCount, 1.0f));
    msg.back() ^= 1;  // the last chunk's checksum
    EXPECT_NE(expect_agreement(case_of(msg), kGrids[1], spec).find("checksum mismatch"), std::string::npos);
    msg[4] = 2;  // the version
    EXPECT_NE(expect_agreement(case_of(msg), kGrids[0], spec).find("version 2"), std::string::npos);
  }
}

// The stages launched back to back, as a device stream runs them, with one workspace for every
// message: after a stage that recorded a fault the later ones do nothing, the report holds the
// CPU decoder's fault, and the next message starts a fresh report.
TEST(GpuDecode, StagesAfterAFaultDoNothing) {
  static constexpr gpu::CrcTables kCrc = gpu::make_crc_tables();
  const std::vector<uint8_t> msg = encode_message("q8,huffman,chunk:4096", kRefusalCount);
  const size_t chunk1 =
      MessageHeader::parse(std::span(msg).first(MessageHeader::header_bytes(msg))).chunk(1).byte_begin;
  std::vector<std::vector<uint8_t>> messages(4, msg);
  messages[0][6] = 30;           // the chunk size, resealed below: the header
  messages[1][chunk1 + 9] ^= 1;  // chunk 1's checksum
  messages[2][chunk1] = 1;       // chunk 1's kind, resealed below
  fuzz::reseal(messages[0]);
  fuzz::reseal(messages[2]);
  const auto state = std::make_unique<gpu::DenseDecodeState>();
  std::vector<uint8_t> symbols(kRefusalCount);
  for (const std::vector<uint8_t>& m : messages) {
    std::vector<float> dst(kRefusalCount, 1.0f), cpu = dst;
    std::string cpu_error;
    try {
      decode_accumulate(m, {dcFloat32, cpu.data(), kRefusalCount});
    } catch (const Error& e) {
      cpu_error = e.what();
    }
    const gpu::DenseDecodeArgs args{m.data(), m.size(), dcFloat32,   dst.data(),    kRefusalCount,
                                    false,    &kCrc,    state.get(), symbols.data()};
    for (auto stage : {gpu::parse_message, gpu::check_checksums, gpu::decode_symbols, gpu::accumulate_values})
      kernels::emulate_grid({2, 4}, EmulatorMode::Sequential, [&](const kernels::ThreadCoords& t) { stage(t, args); });
    const gpu::DecodeError error = gpu::reported_error(state->report);
    EXPECT_EQ(error.fault == gpu::DecodeFault::none ? "" : decode_error_message(error), cpu_error);
    if (cpu_error.empty()) EXPECT_EQ(0, std::memcmp(dst.data(), cpu.data(), 4 * kRefusalCount));
    else EXPECT_EQ(dst, std::vector<float>(kRefusalCount, 1.0f)) << cpu_error;
  }
}

}  // namespace
}  // namespace dc::compression::test
