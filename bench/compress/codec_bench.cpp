// Codec throughput per core, next to memcpy of the same buffer in the same run. Bytes counted are
// the float32 input (memcpy: the bytes copied; Huffman: the 8-bit symbols in or out), so a rate
// compares directly with memcpy's. Run e.g.
//   codec_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// Names: <what>/<isa>/<buffer size>.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "compression/compression.h"
#include "compression/form/wire_format.h"
#include "compression/select.h"

namespace dc::compression {
namespace {

struct Size {
  const char* name;
  size_t bytes;
};
// In L2, in L3, in memory.
constexpr Size kSizes[] = {{"256KiB", size_t(256) << 10}, {"4MiB", size_t(4) << 20}, {"64MiB", size_t(64) << 20}};

std::vector<float> gradient(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1e-3f);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

void bench_memcpy(benchmark::State& state, size_t bytes) {
  const std::vector<float> src = gradient(bytes / 4, 1);
  std::vector<float> dst(bytes / 4);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}

// The sampled threshold fused with error feedback: one pass reads input and residual, writes the
// residual and collects the candidates.
void bench_select(benchmark::State& state, Isa isa, size_t bytes, bool sampled) {
  const size_t n = bytes / 4;
  const std::vector<float> x = gradient(n, 2);
  Residual residual(n);
  TopKSelector selector;
  TopKSelector::Result result;
  const CodecKernels& k = codec_kernels(isa);
  for (auto _ : state) {
    selector.select(k, {x.data(), ElemType::f32, residual.data()}, n, kept_target(0.001, n), sampled, residual.data(),
                    1.0f, result);
    benchmark::DoNotOptimize(result.kept.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}

// q8 with error feedback: symbols, per-block scales and residuals, chunk by chunk.
void bench_q8_quantize(benchmark::State& state, Isa isa, size_t bytes, Rounding rounding) {
  const size_t n = bytes / 4;
  const std::vector<float> x = gradient(n, 3);
  Residual residual(n);
  std::vector<uint8_t> symbols(n);
  std::vector<float> scales(n / Spec::kDefaultBlock + 1);
  const CodecKernels& k = codec_kernels(isa);
  const uint32_t chunk = 1u << Spec::kDefaultChunkLog2;
  for (auto _ : state) {
    for (size_t begin = 0; begin < n; begin += chunk) {
      const uint32_t len = uint32_t(std::min<size_t>(chunk, n - begin));
      const DenseQuantizeArgs args{{x.data(), ElemType::f32, residual.data()},
                                   begin,
                                   len,
                                   residual.data(),
                                   1.0f,
                                   Spec::kDefaultBlock,
                                   rounding,
                                   RoundingKey{1, 2},
                                   begin,
                                   symbols.data() + begin,
                                   scales.data() + begin / Spec::kDefaultBlock};
      k.quantize_dense(args);
    }
    benchmark::DoNotOptimize(symbols.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}

// q8 symbols of a normal gradient, as the Huffman coder sees them, and their code.
struct Symbols {
  std::vector<uint8_t> data;
  HuffmanTable table;
};

Symbols q8_symbols(size_t n) {
  const std::vector<float> x = gradient(n, 4);
  Symbols s;
  s.data.resize(n);
  std::vector<float> scales(n / Spec::kDefaultBlock + 1);
  const DenseQuantizeArgs args{{x.data(), ElemType::f32, nullptr},
                               0,
                               uint32_t(n),
                               nullptr,
                               1.0f,
                               Spec::kDefaultBlock,
                               Rounding::nearest,
                               RoundingKey{1, 2},
                               0,
                               s.data.data(),
                               scales.data()};
  codec_kernels().quantize_dense(args);
  uint32_t counts[256] = {};
  codec_kernels().byte_histogram(s.data.data(), n, counts);
  s.table = HuffmanTable::build(counts, 256);
  return s;
}

// Chunks of 65536 symbols in four streams each, as in a message.
constexpr size_t kChunkSymbols = 65536;

void bench_huffman_encode(benchmark::State& state, Isa isa, size_t bytes) {
  const Symbols s = q8_symbols(bytes);
  std::vector<uint8_t> out(bytes * 2);
  const CodecKernels& k = codec_kernels(isa);
  for (auto _ : state) {
    size_t pos = 0;
    for (size_t c = 0; c < bytes; c += kChunkSymbols) {
      const size_t len = std::min(kChunkSymbols, bytes - c);
      for (unsigned st = 0; st < 4; ++st) {
        const uint64_t b = wire::segment_begin(len, 4, st), e = wire::segment_begin(len, 4, st + 1);
        pos += k.huffman_encode(s.data.data() + c + b, e - b, s.table.codes(), out.data() + pos, out.size() - pos);
      }
    }
    benchmark::DoNotOptimize(pos);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}

void bench_huffman_decode(benchmark::State& state, Isa isa, size_t bytes) {
  const Symbols s = q8_symbols(bytes);
  const CodecKernels& k = codec_kernels(isa);
  std::vector<uint8_t> coded(bytes * 2);
  std::vector<StreamsView> chunks;
  size_t pos = 0;
  for (size_t c = 0; c < bytes; c += kChunkSymbols) {
    const size_t len = std::min(kChunkSymbols, bytes - c);
    StreamsView v{};
    v.count = 4;
    for (unsigned st = 0; st < 4; ++st) {
      const uint64_t b = wire::segment_begin(len, 4, st), e = wire::segment_begin(len, 4, st + 1);
      v.data[st] = coded.data() + pos;
      v.size[st] =
          k.huffman_encode(s.data.data() + c + b, e - b, s.table.codes(), coded.data() + pos, coded.size() - pos);
      pos += v.size[st];
    }
    chunks.push_back(v);
  }
  std::vector<uint8_t> out(bytes);
  for (auto _ : state) {
    for (size_t c = 0; c < chunks.size(); ++c) {
      const size_t len = std::min(kChunkSymbols, bytes - c * kChunkSymbols);
      if (!k.huffman_decode(chunks[c], s.table.decode_table(), out.data() + c * kChunkSymbols, len))
        state.SkipWithError("decode failed");
    }
    benchmark::DoNotOptimize(out.data());
  }
  if (out != s.data) state.SkipWithError("decoded symbols differ");
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}

// Whole messages: Encoder::encode and decode_accumulate into float32.
void bench_encode(benchmark::State& state, const std::string& text, Isa isa, size_t bytes) {
  const Spec spec = parse_spec(text);
  const size_t n = bytes / 4;
  const std::vector<float> x = gradient(n, 5);
  Residual residual(n);
  std::vector<uint8_t> msg(max_message_bytes(spec, n));
  Encoder encoder(isa);
  uint64_t seed = 0;
  size_t out = 0;
  for (auto _ : state)
    out = encoder.encode(spec, dcFloat32, x.data(), n, spec.error_feedback ? &residual : nullptr, seed++, msg).bytes;
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  state.counters["ratio"] = double(bytes) / double(out);
}

void bench_decode(benchmark::State& state, const std::string& text, Isa isa, size_t bytes) {
  const Spec spec = parse_spec(text);
  const size_t n = bytes / 4;
  const std::vector<float> x = gradient(n, 6);
  Residual residual(n);
  std::vector<uint8_t> msg(max_message_bytes(spec, n));
  msg.resize(
      Encoder(isa).encode(spec, dcFloat32, x.data(), n, spec.error_feedback ? &residual : nullptr, 1, msg).bytes);
  std::vector<float> sum(n, 0.0f);
  for (auto _ : state) {
    decode_accumulate(msg, {dcFloat32, sum.data(), n}, isa);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}

const char* const kMessageSpecs[] = {"q8", "q8,ef", "q8,huffman,ef", "topk:0.001:sampled,q8,huffman,ef",
                                     "topk:0.001,q8,huffman,ef"};

void register_all() {
  std::vector<Isa> isas = {Isa::baseline};
  if (isa_available(Isa::avx2)) isas.insert(isas.begin(), Isa::avx2);
  for (const Size& size : kSizes) {
    const std::string sz = std::string("/") + size.name;
    const size_t b = size.bytes;
    benchmark::RegisterBenchmark(("memcpy" + sz).c_str(), bench_memcpy, b);
    for (Isa isa : isas) {
      const std::string is = std::string("/") + codec_kernels(isa).name;
      benchmark::RegisterBenchmark(("select_sampled_ef" + is + sz).c_str(), bench_select, isa, b, true);
      benchmark::RegisterBenchmark(("select_exact_ef" + is + sz).c_str(), bench_select, isa, b, false);
      benchmark::RegisterBenchmark(("q8_quantize_ef" + is + sz).c_str(), bench_q8_quantize, isa, b, Rounding::nearest);
      benchmark::RegisterBenchmark(("q8_stochastic_ef" + is + sz).c_str(), bench_q8_quantize, isa, b,
                                   Rounding::stochastic);
      benchmark::RegisterBenchmark(("huffman_encode" + is + sz).c_str(), bench_huffman_encode, isa, b);
      benchmark::RegisterBenchmark(("huffman_decode" + is + sz).c_str(), bench_huffman_decode, isa, b);
      for (const char* spec : kMessageSpecs) {
        benchmark::RegisterBenchmark(("encode[" + std::string(spec) + "]" + is + sz).c_str(), bench_encode, spec, isa,
                                     b);
        benchmark::RegisterBenchmark(("decode[" + std::string(spec) + "]" + is + sz).c_str(), bench_decode, spec, isa,
                                     b);
      }
    }
  }
}

}  // namespace
}  // namespace dc::compression

int main(int argc, char** argv) {
  dc::compression::register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
