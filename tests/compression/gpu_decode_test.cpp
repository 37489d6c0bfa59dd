// The GPU decoder's kernels (compression/gpu/decode.h), run through the emulator, against
// the CPU decoder (issue 31): the same bits in float32, float16 and bfloat16 targets, added or
// written, for dense messages of every spec, block and chunk size and for sparse messages (top-k,
// exact and sampled, with and without q8, huffman and ef: sparse chunks of one and four streams,
// dense q8 and float32 chunks); and the same refusal, word for word, of flipped, truncated,
// oversized, forged (headers, chunks, code tables, gaps) and mismatched messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>

#include "compression/gpu/decode.h"
#include "compression/sparse_coder.h"
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
  for (const char* spec : {"q8:64,huffman,chunk:4096", "q8:100,chunk:4096", "topk:0.125,q8:64,huffman,chunk:8192",
                           "topk:0.05,chunk:4096", "topk:0.3,chunk:4096"}) {
    std::vector<uint8_t> msg = encode_message(spec, 9000);
    EXPECT_EQ(expect_agreement(case_of(msg, dcFloat16), {2, 3}, spec, EmulatorMode::Threads), "");
    msg[msg.size() - 100] ^= 4;
    fuzz::reseal(msg);
    expect_agreement(case_of(msg, dcBfloat16, true), {2, 3}, spec, EmulatorMode::Threads);
  }
}

// Two chunks: 4096 elements (four streams with huffman) and 904 (one stream).
constexpr size_t kRefusalCount = 5000;

// Messages of every form: dense; sparse chunks raw and Huffman-coded, q8 and float32; one sparse
// chunk of four streams (1024 of 8192 kept); dense q8 and float32 chunks of sparse messages.
struct RefusalCase {
  const char* spec;
  size_t count;
};
const RefusalCase kRefusalCases[] = {{"q8:64,chunk:4096", kRefusalCount},
                                     {"q8:stochastic:100,huffman,chunk:4096", kRefusalCount},
                                     {"topk:0.05,q8,huffman,chunk:4096", kRefusalCount},
                                     {"topk:0.05,chunk:4096", kRefusalCount},
                                     {"topk:0.05,q8:16,chunk:4096", kRefusalCount},
                                     {"topk:0.05:sampled,huffman,chunk:4096", kRefusalCount},
                                     {"topk:0.125,q8:64,huffman,chunk:8192", 8192},
                                     {"topk:0.3,q8,huffman,chunk:4096", kRefusalCount},
                                     {"topk:0.3,chunk:4096", 1500}};

TEST(GpuDecode, RefusesEveryFlippedBitAsTheCpuDoes) {
  for (const auto& [spec, count] : kRefusalCases) {
    const std::vector<uint8_t> msg = encode_message(spec, count);
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
  for (const auto& [spec, count] : kRefusalCases) {
    const std::vector<uint8_t> msg = encode_message(spec, count);
    for (size_t len = 0; len <= msg.size() + 9; ++len) {
      std::vector<uint8_t> cut(msg.begin(), msg.begin() + std::min(len, msg.size()));
      cut.resize(len, 0);
      DecodeCase c = case_of(cut);
      c.count = count;
      c.target = target_of(dcFloat32, count, 3);
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
  for (const auto& [spec, count] : kRefusalCases) {
    const std::vector<uint8_t> msg = encode_message(spec, count);
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
  const char* const specs[] = {"q8:16,chunk:4096",
                               "q8,huffman,chunk:4096",
                               "q8:stochastic:4096,huffman",
                               "topk:0.05,q8,huffman,chunk:4096",
                               "topk:0.3,q8,chunk:4096",
                               "topk:0.05,chunk:4096",
                               "topk:0.05:sampled,q8:16,chunk:4096",
                               "topk:0.01,huffman,ef",
                               "topk:0.12,q8:stochastic:32,huffman,chunk:8192"};
  std::mt19937_64 rng(31);
  size_t refused = 0, added = 0;
  for (int round = 0; round < 4500; ++round) {
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

// ---- Sparse messages ----

// A message of `spec` over `n` values of `input`; with ef the second step's, whose residual holds
// what the first step left unsent.
std::vector<uint8_t> encode_steps(const Spec& spec, Input input, size_t n, uint64_t seed) {
  TypedBuffer in(dcFloat32, make_input(input, n, seed));
  Residual residual(n);
  if (spec.error_feedback) encode(spec, in, &residual, seed);
  return encode(spec, in, spec.error_feedback ? &residual : nullptr, seed + 1);
}

// What the sparse messages of a test were made of, so that it can say it reached each form.
struct SparseForms {
  size_t sparse_chunks = 0, four_stream_chunks = 0, dense_chunks = 0, nonfinite_messages = 0;

  void count(std::span<const uint8_t> msg) {
    const MessageHeader h = MessageHeader::parse(msg.first(MessageHeader::header_bytes(msg)));
    nonfinite_messages += h.nonfinite();
    for (uint32_t c = 0; c < h.chunk_count(); ++c) {
      const uint8_t* p = msg.data() + h.chunk(c).byte_begin;
      if (p[0] == uint8_t(wire::ChunkKind::dense)) {
        ++dense_chunks;
      } else {
        ++sparse_chunks;
        four_stream_chunks += h.form().huffman && wire::streams_for(wire::get_u32(p + 1)) == 4;
      }
    }
  }
};

TEST(GpuDecode, AddsTheCpuDecodersBitsForSparseMessages) {
  const char* const selections[] = {"topk:0.001", "topk:0.05", "topk:0.3", "topk:0.05:sampled", "topk:0.001:exact"};
  const char* const values[] = {"", ",q8", ",q8:stochastic:16"};
  const size_t lengths[] = {0, 1, 17, 4097, 70001};
  constexpr GridShape grids[] = {{1, 1}, {3, 5}, {2, 64}};
  SparseForms forms;
  size_t decodes = 0, specs = 0;
  for (const char* selection : selections) {
    for (const char* value : values) {
      for (const char* huffman : {"", ",huffman"}) {
        for (const char* ef : {"", ",ef"}) {
          for (const char* chunk : {",chunk:4096", ""}) {  // 4096, and 65536 elements (four streams)
            const Spec spec = parse_spec(std::string(selection) + value + huffman + ef + chunk);
            ++specs;
            for (size_t l = 0; l < std::size(lengths); ++l) {
              const size_t n = lengths[l];
              const Input input = kInputs[(specs + l) % std::size(kInputs)];
              const std::vector<uint8_t> msg = encode_steps(spec, input, n, specs * 10 + l);
              ASSERT_TRUE(msg[5] & wire::kSparse) << spec.to_string();
              forms.count(msg);
              for (dcDataType_t type : kTypes) {
                for (bool overwrite : {false, true}) {
                  const std::string what = spec.to_string() + " input " + std::to_string(int(input)) + " n " +
                                           std::to_string(n) + " " + type_name(type) + (overwrite ? " overwrite" : "");
                  const std::string error = expect_agreement(case_of(msg, type, overwrite), grids[decodes++ % 3], what);
                  ASSERT_EQ(error, "") << what;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(forms.sparse_chunks, 500u);
  EXPECT_GT(forms.four_stream_chunks, 10u);
  EXPECT_GT(forms.dense_chunks, 100u);
  EXPECT_GT(forms.nonfinite_messages, 20u);
}

// A sparse message's values, added and written, are the CPU decoder's: every kept element lands at
// its offset (a planted error in the offsets, streams or scatter moves or drops one).
TEST(GpuDecode, WritesEveryKeptElementWhereTheCpuDoes) {
  for (const char* spec :
       {"topk:0.1,q8,huffman,chunk:16384", "topk:0.1,huffman,chunk:16384", "topk:0.1,q8,chunk:16384"}) {
    const std::vector<uint8_t> msg = encode_message(spec, 40000);
    std::vector<float> cpu(40000, 0.0f), gpu(40000, 0.0f);
    decode_accumulate(msg, {dcFloat32, cpu.data(), cpu.size(), true});
    gpu::decode_accumulate_emulated(msg, {dcFloat32, gpu.data(), gpu.size(), true}, {3, 5});
    EXPECT_EQ(0, std::memcmp(cpu.data(), gpu.data(), 4 * cpu.size())) << spec;
    EXPECT_EQ(std::count_if(gpu.begin(), gpu.end(), [](float v) { return v != 0.0f; }),
              std::count_if(cpu.begin(), cpu.end(), [](float v) { return v != 0.0f; }))
        << spec;
    EXPECT_GT(std::count_if(cpu.begin(), cpu.end(), [](float v) { return v != 0.0f; }), 2000) << spec;
  }
}

// A chunk's sparse fields (kind, kept count, scales, raw offsets and values, stream sizes, stream
// bytes), forged and resealed.
TEST(GpuDecode, RefusesForgedSparseChunksAsTheCpuDoes) {
  const RefusalCase cases[] = {
      {"topk:0.05,q8:16,chunk:4096", kRefusalCount},         {"topk:0.05,chunk:4096", kRefusalCount},
      {"topk:0.05,q8:16,huffman,chunk:4096", kRefusalCount}, {"topk:0.05,huffman,chunk:4096", kRefusalCount},
      {"topk:0.125,q8:64,huffman,chunk:8192", 8192},         {"topk:0.125,huffman,chunk:8192", 8192}};
  size_t sparse_chunks = 0;
  for (const auto& [spec, count] : cases) {
    const std::vector<uint8_t> msg = encode_message(spec, count);
    const MessageHeader h = MessageHeader::parse(std::span(msg).first(MessageHeader::header_bytes(msg)));
    const MessageForm& f = h.form();
    auto forged = [&](uint32_t chunk, size_t offset, std::vector<uint8_t> bytes, const std::string& what) {
      std::vector<uint8_t> bad = msg;
      size_t pos = h.chunk(chunk).byte_begin + offset;
      for (uint8_t b : bytes) bad[pos++] = b;
      fuzz::reseal(bad);
      return expect_agreement(case_of(bad, dcFloat16, chunk % 2), kGrids[chunk % 2],
                              std::string(spec) + " chunk " + std::to_string(chunk) + " " + what);
    };
    auto word = [](uint32_t v) {
      std::vector<uint8_t> b(4);
      wire::put_u32(b.data(), v);
      return b;
    };
    for (uint32_t c = 0; c < h.chunk_count(); ++c) {
      const MessageHeader::ChunkInfo info = h.chunk(c);
      const uint8_t* p = msg.data() + info.byte_begin;
      if (p[0] != uint8_t(wire::ChunkKind::sparse)) continue;
      ++sparse_chunks;
      const uint32_t m = wire::get_u32(p + 1), elems = info.elems;
      const size_t size = info.byte_end - info.byte_begin;
      ASSERT_GT(m, 4u) << spec;
      for (uint8_t kind : {0, 2, 0xff}) EXPECT_NE(forged(c, 0, {kind}, "kind"), "");
      for (uint32_t kept : {0u, m - 1, m + 1, elems / 8, elems / 8 + 1, 0x80000000u, 0xffffffffu}) {
        const std::string error = forged(c, 1, word(kept), "kept count " + std::to_string(kept));
        if (kept > elems / 8) {
          EXPECT_NE(error.find(std::to_string(kept) + " kept elements"), std::string::npos);
        }
      }
      const uint32_t blocks = f.q8 ? uint32_t(wire::div_ceil(m, f.block)) : 0;
      for (uint32_t b = 0; b < blocks; b += std::max(1u, blocks - 1)) {
        EXPECT_NE(forged(c, 5 + 4 * b + 3, {0xff}, "negative scale"), "");
        EXPECT_NE(forged(c, 5 + 4 * b, {0, 0, 0x80, 0x7f}, "infinite scale"), "");
        EXPECT_NE(forged(c, 5 + 4 * b, {0, 0, 0xc0, 0x7f}, "NaN scale"), "");
      }
      const size_t section = 5 + 4 * size_t(blocks);
      if (!f.huffman) {
        auto offset = [&](uint32_t j) { return wire::get_u32(p + section + 4 * j); };
        for (uint32_t j : {0u, 1u, m / 2, m - 1}) {
          for (uint32_t v :
               {j > 0 ? offset(j - 1) : 0u, j > 0 ? offset(j - 1) - 1 : 0xffffffffu, elems - 1, elems, 0xffffffffu}) {
            const std::string error = forged(c, section + 4 * j, word(v), "offset " + std::to_string(j));
            if (j > 0 && v <= offset(j - 1)) {
              EXPECT_NE(error.find("not increasing"), std::string::npos);
            }
          }
          if (j + 1 < m) forged(c, section + 4 * j, word(offset(j + 1) - 1), "offset just below the next");
        }
        const size_t values = section + 4 * size_t(m);
        for (uint32_t j : {0u, m / 2, m - 1}) {
          if (f.q8) {
            for (uint8_t v : {0, 252, 0xfd, 0xfe, 0xff})
              forged(c, values + j, {v}, "symbol " + std::to_string(j) + " = " + std::to_string(v));
          } else {
            for (uint32_t v : {0x7f800000u, 0xff800000u, 0x7fc00001u, 0x80000000u, 0x00000001u})
              forged(c, values + 4 * j, word(v), "value " + std::to_string(j) + " = " + std::to_string(v));
          }
        }
      } else {
        const unsigned streams = wire::streams_for(m);
        if (streams == 4) {
          const uint32_t first = wire::get_u32(p + section);
          for (uint32_t v : {first - 1, first + 1, 0u, uint32_t(size), 0xffffffffu})
            EXPECT_NE(forged(c, section, word(v), "stream size " + std::to_string(v)), "");
          for (unsigned s = 1; s < 3; ++s) {
            const uint32_t v = wire::get_u32(p + section + 4 * s);
            for (uint32_t w : {v - 1, v + 1}) EXPECT_NE(forged(c, section + 4 * s, word(w), "stream size"), "");
          }
        }
        // Bytes of the streams: gap codes and bits, values, padding.
        const size_t streams_begin = section + 4 * (streams - 1);
        for (size_t at = streams_begin; at < size; at += std::max<size_t>(1, (size - streams_begin) / 40))
          for (uint8_t v : {uint8_t(0), uint8_t(0xff), uint8_t(p[at] ^ 0x10)})
            forged(c, at, {v}, "byte " + std::to_string(at) + " = " + std::to_string(v));
        forged(c, size - 1, {uint8_t(p[size - 1] ^ 0x80)}, "the last byte's top bit");
      }
    }
  }
  EXPECT_EQ(sparse_chunks, 10u);  // two of each 5000-element message, one of each 8192-element one
}

// The message with its code tables replaced by `tables` (the offsets behind them moved), resealed.
std::vector<uint8_t> with_tables(const std::vector<uint8_t>& msg, std::span<const uint8_t> tables) {
  return with_value_table(msg, tables);
}

std::vector<uint8_t> stored(const gpu::CodeLengths& code, unsigned alphabet) {
  std::vector<uint8_t> out(gpu::kMaxStoredTableBytes);
  out.resize(gpu::write_code(code, alphabet, out.data()));
  return out;
}

gpu::CodeLengths single_code(uint8_t symbol) {
  gpu::CodeLengths code;
  code.kind = gpu::CodeKind::single;
  code.single = symbol;
  return code;
}

// Sparse messages with other gap tables (after the value table when there is one): empty, one
// width (0, in range, past the chunk), a flat code of every width, the widths' lengths reversed.
TEST(GpuDecode, RefusesForgedGapTablesAsTheCpuDoes) {
  size_t refused = 0;
  for (const auto& [spec, count] : {RefusalCase{"topk:0.05,q8,huffman,chunk:4096", kRefusalCount},
                                    RefusalCase{"topk:0.05,huffman,chunk:4096", kRefusalCount},
                                    RefusalCase{"topk:0.125,q8:64,huffman,chunk:8192", 8192}}) {
    const std::vector<uint8_t> msg = encode_message(spec, count);
    const MessageHeader h = MessageHeader::parse(std::span(msg).first(MessageHeader::header_bytes(msg)));
    std::vector<uint8_t> value_table;
    if (h.form().q8) {
      value_table.resize(gpu::kMaxStoredTableBytes + 8);
      value_table.resize(h.value_table().write(value_table.data()));
    }
    gpu::CodeLengths flat;  // 5 bits for every width
    flat.kind = gpu::CodeKind::coded;
    std::fill(flat.lengths, flat.lengths + wire::kGapAlphabet, uint8_t(5));
    gpu::CodeLengths reversed = h.gap_table().code();
    std::reverse(reversed.lengths, reversed.lengths + wire::kGapAlphabet);
    gpu::CodeLengths empty;
    const std::vector<std::pair<gpu::CodeLengths, std::string>> gap_codes = {
        {empty, "empty"},
        {single_code(0), "width 0"},
        {single_code(1), "width 1"},
        {single_code(4), "width 4"},
        {single_code(h.form().chunk_log2 + 1), "the widest"},
        {single_code(h.form().chunk_log2 + 2), "too wide"},
        {single_code(31), "width 31"},
        {flat, "flat"},
        {reversed, "reversed"},
        {h.gap_table().code(), "its own"}};
    for (const auto& [code, name] : gap_codes) {
      std::vector<uint8_t> tables = value_table;
      const std::vector<uint8_t> gap = stored(code, wire::kGapAlphabet);
      tables.insert(tables.end(), gap.begin(), gap.end());
      const std::string error = expect_agreement(case_of(with_tables(msg, tables), dcBfloat16, true), kGrids[1],
                                                 std::string(spec) + " gap table " + name);
      if (name == "empty") {
        EXPECT_NE(error.find("empty code table"), std::string::npos) << spec;
      }
      if (name == "its own") {
        EXPECT_EQ(error, "") << spec;
      }
      refused += !error.empty();
    }
    if (h.form().q8) {  // an empty value table before the message's own gap table
      std::vector<uint8_t> tables = stored(empty, wire::kValueAlphabet);
      const std::vector<uint8_t> gap = stored(h.gap_table().code(), wire::kGapAlphabet);
      tables.insert(tables.end(), gap.begin(), gap.end());
      EXPECT_NE(expect_agreement(case_of(with_tables(msg, tables)), kGrids[0], std::string(spec) + " empty value table")
                    .find("empty code table"),
                std::string::npos);
    }
  }
  EXPECT_GT(refused, 15u);
}

// One sparse chunk of 2^log2 elements, Huffman-coded float32 values, built here: the gaps and
// value bits given (2048 kept: four streams of 512), a gap code of widths 1 to 22 (so that a gap
// wider than the chunk's log2 + 1 can be sent), the flags given.
constexpr uint32_t kCraftLog2 = 14;
constexpr uint32_t kCraftKept = 2048;

std::vector<uint8_t> crafted_message(const std::vector<uint32_t>& gaps, const std::vector<uint32_t>& value_bits,
                                     uint8_t flags = wire::kSparse | wire::kHuffman, uint32_t log2 = kCraftLog2) {
  uint32_t counts[wire::kGapAlphabet] = {};
  for (unsigned w = 1; w <= 22; ++w) counts[w] = w == 4 ? 1000 : 1;
  const HuffmanTable gap_table = HuffmanTable::build(counts, wire::kGapAlphabet);
  std::vector<uint8_t> table(gpu::kMaxStoredTableBytes + 8);
  table.resize(gap_table.write(table.data()));
  const size_t m = gaps.size();
  std::vector<float> floats(m);
  std::memcpy(floats.data(), value_bits.data(), 4 * m);
  std::vector<uint8_t> chunk(5);
  chunk[0] = uint8_t(wire::ChunkKind::sparse);
  wire::put_u32(chunk.data() + 1, uint32_t(m));
  const unsigned streams = wire::streams_for(m);
  std::vector<uint8_t> data;
  std::vector<uint32_t> sizes;
  for (unsigned s = 0; s < streams; ++s) {
    const size_t b = wire::segment_begin(m, streams, s), e = wire::segment_begin(m, streams, s + 1);
    std::vector<uint8_t> out(8 * (e - b) + 64);
    out.resize(encode_sparse_stream(gaps.data() + b, nullptr, floats.data() + b, e - b, gap_table, nullptr, out.data(),
                                    out.size()));
    sizes.push_back(uint32_t(out.size()));
    data.insert(data.end(), out.begin(), out.end());
  }
  for (unsigned s = 0; s + 1 < streams; ++s) {
    chunk.resize(chunk.size() + 4);
    wire::put_u32(chunk.data() + chunk.size() - 4, sizes[s]);
  }
  chunk.insert(chunk.end(), data.begin(), data.end());

  std::vector<uint8_t> msg(wire::kFixedHeaderBytes);
  wire::put_u32(msg.data(), wire::kMagic);
  msg[4] = wire::kVersion;
  msg[5] = flags;
  msg[6] = uint8_t(log2);
  wire::put_u64(msg.data() + 8, uint64_t(1) << log2);
  const size_t header = wire::kFixedHeaderBytes + table.size() + wire::kChunkEntryBytes;
  wire::put_u32(msg.data() + 20, uint32_t(header));
  wire::put_u32(msg.data() + 24, uint32_t(header + chunk.size()));
  msg.insert(msg.end(), table.begin(), table.end());
  msg.resize(header);
  wire::put_u32(msg.data() + header - wire::kChunkEntryBytes, uint32_t(header + chunk.size()));
  msg.insert(msg.end(), chunk.begin(), chunk.end());
  fuzz::reseal(msg);
  return msg;
}

// Offsets at and past the chunk's end: from one stream's gaps, or only from all four together;
// each with the faults that come before it (a stream that does not decode) and after it (a
// non-finite value); and the values' bits, NaN payloads included, where they may be.
TEST(GpuDecode, RefusesCraftedGapsAsTheCpuDoes) {
  const uint32_t elems = 1u << kCraftLog2, segment = kCraftKept / 4;
  const std::vector<uint32_t> even(kCraftKept, elems / kCraftKept);  // the last offset elems - 1
  std::vector<uint32_t> values(kCraftKept);
  for (uint32_t j = 0; j < kCraftKept; ++j) values[j] = bits(float(j % 37) * 0.25f - 3.0f);
  struct Craft {
    std::string name;
    std::vector<uint32_t> gaps, values;
    uint8_t flags;
    std::string expect;  // part of the CPU's error, "" when it adds the message
  };
  std::vector<Craft> crafts;
  const uint8_t finite = wire::kSparse | wire::kHuffman, nonfinite = finite | wire::kNonFinite;
  crafts.push_back({"last offset at the end", even, values, finite, ""});
  auto with = [](std::vector<uint32_t> v, uint32_t j, uint32_t x) {
    v[j] = x;
    return v;
  };
  const std::vector<uint32_t> one_past = with(even, kCraftKept - 1, even.back() + 1);
  crafts.push_back({"all streams' gaps one past", one_past, values, finite, "an index past the chunk's end"});
  const std::vector<uint32_t> first_far = with(even, 0, elems - 1);  // the rest still fits stream 0
  crafts.push_back({"stream 0 past the end", first_far, values, finite, "an index past the chunk's end"});
  const std::vector<uint32_t> stream2_far = with(even, 2 * segment, elems);
  crafts.push_back({"stream 2 alone past the end", stream2_far, values, finite, "an index past the chunk's end"});
  crafts.push_back({"stream 2 past the end, stream 3 too wide", with(stream2_far, 3 * segment + 7, 1u << 15), values,
                    finite, "an index stream does not decode"});
  crafts.push_back({"too wide in stream 1, past the end in all", with(one_past, segment + 1, 1u << 16), values, finite,
                    "an index stream does not decode"});
  const std::vector<uint32_t> nan = with(values, segment + 3, 0x7fc00001u), inf = with(values, 5, 0xff800000u);
  crafts.push_back({"past the end and a NaN", one_past, nan, finite, "an index past the chunk's end"});
  crafts.push_back({"a NaN in a finite message", even, nan, finite, "a non-finite value"});
  crafts.push_back({"an infinity in a finite message", even, inf, finite, "a non-finite value"});
  crafts.push_back({"a NaN with a payload", even, nan, nonfinite, ""});
  crafts.push_back({"an infinity", even, inf, nonfinite, ""});
  crafts.push_back({"one per element", std::vector<uint32_t>(kCraftKept, 1), values, finite, ""});
  crafts.push_back({"the widest gap first", with(std::vector<uint32_t>(kCraftKept, 1), 0, elems - kCraftKept + 1),
                    values, finite, ""});
  crafts.push_back({"the widest gap last",
                    with(std::vector<uint32_t>(kCraftKept, 1), kCraftKept - 1, elems - kCraftKept + 1), values, finite,
                    ""});
  for (const Craft& craft : crafts) {
    const std::vector<uint8_t> msg = crafted_message(craft.gaps, craft.values, craft.flags);
    ASSERT_EQ(msg.size(), MessageHeader::parse(std::span(msg).first(MessageHeader::header_bytes(msg))).message_bytes());
    for (dcDataType_t type : kTypes) {
      for (bool overwrite : {false, true}) {
        const std::string error = expect_agreement(case_of(msg, type, overwrite), kGrids[overwrite], craft.name);
        if (craft.expect.empty()) EXPECT_EQ(error, "") << craft.name;
        else EXPECT_NE(error.find(craft.expect), std::string::npos) << craft.name << ": " << error;
      }
    }
  }
}

// The stages launched back to back, as a device stream runs them, with one workspace for every
// message: after a stage that recorded a fault the later ones do nothing, the report holds the
// CPU decoder's fault, and the next message starts a fresh report.
TEST(GpuDecode, StagesAfterAFaultDoNothing) {
  static constexpr gpu::CrcTables kCrc = gpu::make_crc_tables();
  std::vector<std::vector<uint8_t>> messages;
  for (const char* spec : {"q8,huffman,chunk:4096", "topk:0.05,q8,huffman,chunk:4096"}) {
    const std::vector<uint8_t> msg = encode_message(spec, kRefusalCount);
    const size_t chunk1 =
        MessageHeader::parse(std::span(msg).first(MessageHeader::header_bytes(msg))).chunk(1).byte_begin;
    for (int i = 0; i < 5; ++i) messages.push_back(msg);
    std::vector<uint8_t>* m = &messages[messages.size() - 5];
    m[0][6] = 30;           // the chunk size, resealed below: the header
    m[1][chunk1 + 9] ^= 1;  // chunk 1's checksum
    m[2][chunk1] = 2;       // chunk 1's kind, resealed below
    m[3][chunk1 + 1] ^= 1;  // chunk 1's first scale or kept count, resealed below
    fuzz::reseal(m[0]);
    fuzz::reseal(m[2]);
    fuzz::reseal(m[3]);
  }
  const auto state = std::make_unique<gpu::DecodeState>();
  std::vector<uint8_t> symbols(kRefusalCount);
  for (const std::vector<uint8_t>& m : messages) {
    std::vector<float> dst(kRefusalCount, 1.0f), cpu = dst;
    std::string cpu_error;
    try {
      decode_accumulate(m, {dcFloat32, cpu.data(), kRefusalCount});
    } catch (const Error& e) {
      cpu_error = e.what();
    }
    const gpu::DecodeArgs args{m.data(), m.size(), dcFloat32,   dst.data(),    kRefusalCount,
                               false,    &kCrc,    state.get(), symbols.data()};
    for (auto stage : {gpu::parse_message, gpu::check_checksums, gpu::decode_symbols, gpu::check_offsets,
                       gpu::accumulate_values, gpu::scatter_values})
      kernels::emulate_grid({2, 4}, EmulatorMode::Sequential, [&](const kernels::ThreadCoords& t) { stage(t, args); });
    const gpu::DecodeError error = gpu::reported_error(state->report);
    EXPECT_EQ(error.fault == gpu::DecodeFault::none ? "" : decode_error_message(error), cpu_error);
    if (cpu_error.empty()) EXPECT_EQ(0, std::memcmp(dst.data(), cpu.data(), 4 * kRefusalCount));
    else EXPECT_EQ(dst, std::vector<float>(kRefusalCount, 1.0f)) << cpu_error;
  }
}

// A stream whose gaps add up past 2^32 (2^20-element chunk, gaps of up to 2^21 - 1): its sum is
// past the chunk however a 32-bit word would wrap it (here to 100, the chunk's sums to 6247).
TEST(GpuDecode, RefusesAStreamWhoseGapsPass32Bits) {
  constexpr uint32_t log2 = 20, per_stream = 2049;
  std::vector<uint32_t> gaps(4 * per_stream, 1), values(4 * per_stream, bits(1.5f));
  for (uint32_t j = 0; j < 2048; ++j) gaps[j] = (1u << 21) - 1;  // 2^32 - 2048
  gaps[2048] = 2148;                                             // the stream's sum 2^32 + 100
  const std::vector<uint8_t> msg = crafted_message(gaps, values, wire::kSparse | wire::kHuffman, log2);
  {  // the checking stages alone first: a decoder that missed the fault would write far outside
    static constexpr gpu::CrcTables kCrc = gpu::make_crc_tables();
    const auto state = std::make_unique<gpu::DecodeState>();
    std::vector<uint8_t> workspace(size_t(1) << log2);
    std::vector<float> dst(size_t(1) << log2);
    const gpu::DecodeArgs args{msg.data(), msg.size(), dcFloat32,   dst.data(),      dst.size(),
                               false,      &kCrc,      state.get(), workspace.data()};
    for (auto stage : {gpu::parse_message, gpu::check_checksums, gpu::decode_symbols, gpu::check_offsets})
      kernels::emulate_grid({3, 5}, EmulatorMode::Sequential, [&](const kernels::ThreadCoords& t) { stage(t, args); });
    const gpu::DecodeError e = gpu::reported_error(state->report);
    ASSERT_EQ(e.fault, gpu::DecodeFault::index_past_end) << decode_error_message(e);
  }
  const std::string error = expect_agreement(case_of(msg), kGrids[1], "gaps past 2^32");
  EXPECT_NE(error.find("an index past the chunk's end"), std::string::npos) << error;
  gaps.assign(gaps.size(), 1);  // the same message, its offsets 0 to 8195
  EXPECT_EQ(expect_agreement(case_of(crafted_message(gaps, values, wire::kSparse | wire::kHuffman, log2)), kGrids[0],
                             "gaps of 1"),
            "");
}

}  // namespace
}  // namespace dc::compression::test
