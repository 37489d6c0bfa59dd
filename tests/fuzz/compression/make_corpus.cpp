// Writes the seed corpora of the fuzz targets (tests/fuzz/compression/corpus/<target>/): small valid
// inputs that reach every decoder path, from which libFuzzer mutates. Rerun after a wire-format
// change:  build/tests/fuzz/make_fuzz_corpus tests/fuzz/compression/corpus
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "compression/compression.h"
#include "compression/form/wire_format.h"
#include "compression/sparse_coder.h"

namespace {

namespace c = dc::compression;
namespace fs = std::filesystem;

void write(const fs::path& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

std::vector<float> values(size_t n, uint64_t seed, bool specials) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1e-3f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  if (specials && n > 40) {
    v[3] = NAN;
    v[17] = INFINITY;
    v[n - 2] = -INFINITY;
  }
  return v;
}

std::vector<uint8_t> encode(const std::string& text, const std::vector<float>& x) {
  const c::Spec spec = c::parse_spec(text);
  c::Residual residual(x.size());
  std::vector<uint8_t> msg(c::max_message_bytes(spec, x.size()));
  c::Encoder encoder;
  msg.resize(
      encoder.encode(spec, dcFloat32, x.data(), x.size(), spec.error_feedback ? &residual : nullptr, 1, msg).bytes);
  return msg;
}

void message_seeds(const fs::path& dir) {
  const char* specs[] = {"q8,chunk:4096",
                         "q8,huffman,chunk:4096",
                         "q8:stochastic:16,huffman,chunk:4096",
                         "topk:0.05,chunk:4096",
                         "topk:0.05,q8,chunk:4096",
                         "topk:0.02,q8,huffman,chunk:4096",
                         "topk:0.02,huffman,chunk:4096",
                         "topk:0.4,q8,huffman,chunk:4096",
                         "topk:0.4,chunk:4096"};
  int i = 0;
  for (const char* spec : specs) {
    for (size_t n : {size_t(0), size_t(300), size_t(9000)}) {
      for (bool specials : {false, true}) {
        if (n == 0 && specials) continue;
        std::vector<uint8_t> seed = {uint8_t((i * 37) & 0xff)};  // mode: types, reseal, piece size
        const std::vector<uint8_t> msg = encode(spec, values(n, i, specials));
        seed.insert(seed.end(), msg.begin(), msg.end());
        write(dir, "seed" + std::to_string(i++), seed);
      }
    }
  }
}

void huffman_seeds(const fs::path& dir) {
  std::mt19937 rng(5);
  int i = 0;
  for (size_t count : {1, 7, 900, 2000}) {
    for (double p : {0.05, 0.3, 0.9}) {
      std::geometric_distribution<int> geo(p);
      std::vector<uint8_t> sym(count);
      for (auto& s : sym) s = uint8_t(std::min(geo(rng), 255));
      uint32_t counts[256] = {};
      for (uint8_t s : sym) counts[s]++;
      const c::HuffmanTable table = c::HuffmanTable::build(counts, 256);
      std::vector<uint8_t> seed = {uint8_t(i & 2), uint8_t(count & 0xff), uint8_t(count >> 8)};
      std::vector<uint8_t> buf(400 + count * 2);
      buf.resize(table.write(buf.data()));
      seed.insert(seed.end(), buf.begin(), buf.end());
      const unsigned streams = c::wire::streams_for(count);
      std::vector<std::vector<uint8_t>> coded(streams);
      for (unsigned s = 0; s < streams; ++s) {
        const uint64_t b = c::wire::segment_begin(count, streams, s), e = c::wire::segment_begin(count, streams, s + 1);
        coded[s].resize((e - b) * 2 + 16);
        coded[s].resize(
            c::codec_kernels().huffman_encode(sym.data() + b, e - b, table.codes(), coded[s].data(), coded[s].size()));
        if (s + 1 < streams) {
          uint8_t size[4];
          c::wire::put_u32(size, uint32_t(coded[s].size()));
          seed.insert(seed.end(), size, size + 4);
        }
      }
      for (const auto& s : coded) seed.insert(seed.end(), s.begin(), s.end());
      write(dir, "dense" + std::to_string(i++), seed);
    }
  }
  // Sparse streams: a gap table, a value table (mode bit 1) or float32 values.
  for (int q8 = 0; q8 < 2; ++q8) {
    for (size_t count : {1, 50, 600}) {
      std::vector<uint32_t> gaps(count);
      std::vector<uint8_t> sym(count);
      std::vector<float> floats(count);
      uint32_t gap_counts[32] = {}, value_counts[256] = {};
      for (size_t j = 0; j < count; ++j) {
        gaps[j] = 1 + rng() % 300;
        sym[j] = uint8_t(rng() % 40);
        floats[j] = float(int(rng() % 2000) - 1000) * 1e-4f;
        gap_counts[32 - __builtin_clz(gaps[j])]++;
        value_counts[sym[j]]++;
      }
      const c::HuffmanTable gt = c::HuffmanTable::build(gap_counts, 32), vt = c::HuffmanTable::build(value_counts, 256);
      std::vector<uint8_t> seed = {uint8_t(1 | (q8 << 1)), uint8_t(count & 0xff), uint8_t(count >> 8)};
      std::vector<uint8_t> buf(400 + count * 8);
      buf.resize(gt.write(buf.data()));
      seed.insert(seed.end(), buf.begin(), buf.end());
      if (q8) {
        buf.resize(400);
        buf.resize(vt.write(buf.data()));
        seed.insert(seed.end(), buf.begin(), buf.end());
      }
      buf.resize(count * 8 + 16);
      buf.resize(c::encode_sparse_stream(gaps.data(), sym.data(), floats.data(), count, gt, q8 ? &vt : nullptr,
                                         buf.data(), buf.size()));
      seed.insert(seed.end(), buf.begin(), buf.end());
      write(dir, "sparse" + std::to_string(q8 * 3 + int(count % 7)), seed);
    }
  }
}

void spec_seeds(const fs::path& dir) {
  const char* specs[] = {"topk:0.001,q8,huffman,ef:0.9",
                         "q8,ef",
                         "q8:stochastic",
                         "auto",
                         "auto:0.01,ef",
                         "topk:0.5:sampled",
                         "q8:stochastic:64,huffman,chunk:4096",
                         "topk:1e-3,ef",
                         "q8:nearest:4096",
                         "topk:0.1:exact,q8,huffman,chunk:1048576",
                         "huffman",
                         "q8,,ef",
                         "topk:2"};
  int i = 0;
  for (const char* s : specs)
    write(dir, "spec" + std::to_string(i++), std::vector<uint8_t>(s, s + std::string(s).size()));
}

void roundtrip_seeds(const fs::path& dir) {
  std::mt19937 rng(9);
  for (int i = 0; i < 24; ++i) {
    std::vector<uint8_t> seed = {uint8_t(i * 17), uint8_t(i)};
    const std::vector<float> v = values(64 + i * 40, i, i % 3 == 0);
    const uint8_t* p = reinterpret_cast<const uint8_t*>(v.data());
    seed.insert(seed.end(), p, p + 4 * v.size());
    write(dir, "values" + std::to_string(i), seed);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_corpus CORPUS_DIR (e.g. tests/fuzz/compression/corpus)\n");
    return 2;
  }
  const fs::path root = argv[1];
  message_seeds(root / "message");
  huffman_seeds(root / "huffman");
  spec_seeds(root / "spec");
  roundtrip_seeds(root / "roundtrip");
  return 0;
}
