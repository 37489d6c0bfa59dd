// Throughput of the CPU reduction kernels for every datatype and op, next to memcpy of the same
// buffer size. Bytes counted are the real traffic: dst + a + b for a reduction, dst + src for
// memcpy. Run e.g. `reduce_bench --benchmark_filter='float/sum|memcpy'`.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/reduce.h"
#include "kernels/reduce_isa.h"

namespace {

struct Size {
  const char* name;
  size_t bytes;
};
constexpr Size kSizes[] = {{"256KiB", size_t(256) << 10}, {"64MiB", size_t(64) << 20}};

// Buffers filled with small finite values, so no element takes a slow denormal or NaN path.
std::vector<unsigned char> filled_buffer(dcDataType_t dt, size_t bytes, int seed) {
  const size_t elem = dc::datatype_size(dt);
  std::vector<unsigned char> buf(bytes);
  for (size_t i = 0; i < bytes / elem; ++i) {
    const float v = float((i * 7 + seed) % 13) * 0.25f + 0.5f;
    unsigned char* p = buf.data() + i * elem;
    switch (dt) {
      case dcFloat16: {
        const uint16_t h = dc::float_to_half(v);
        std::memcpy(p, &h, 2);
        break;
      }
      case dcBfloat16: {
        const uint16_t b = dc::float_to_bf16(v);
        std::memcpy(p, &b, 2);
        break;
      }
      case dcFloat8e4m3: *p = dc::float_to_fp8e4m3(v); break;
      case dcFloat8e5m2: *p = dc::float_to_fp8e5m2(v); break;
      case dcFloat32: std::memcpy(p, &v, 4); break;
      case dcFloat64: {
        const double d = v;
        std::memcpy(p, &d, 8);
        break;
      }
      default: std::memset(p, int(v), elem); break;
    }
  }
  return buf;
}

void bench_reduce(benchmark::State& state, dcDataType_t dt, dcRedOp_t op, size_t bytes) {
  std::vector<unsigned char> a = filled_buffer(dt, bytes, 1);
  const std::vector<unsigned char> b = filled_buffer(dt, bytes, 2);
  std::vector<unsigned char> dst(bytes);
  const size_t count = bytes / dc::datatype_size(dt);
  for (auto _ : state) {
    dc::reduce(dt, op, dst.data(), a.data(), b.data(), count);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(3 * bytes));
}

void bench_memcpy(benchmark::State& state, size_t bytes) {
  const std::vector<unsigned char> src = filled_buffer(dcUint8, bytes, 1);
  std::vector<unsigned char> dst(bytes);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(2 * bytes));
}

}  // namespace

int main(int argc, char** argv) {
  for (const Size& size : kSizes) {
    benchmark::RegisterBenchmark((std::string("memcpy/") + size.name).c_str(), bench_memcpy, size.bytes);
    for (int dt = 0; dt < dcNumTypes; ++dt) {
      for (int op = 0; op < dcNumOps; ++op) {
        const std::string name = std::string("reduce/") + dc::datatype_name(dcDataType_t(dt)) + "/" +
                                 dc::redop_name(dcRedOp_t(op)) + "/" + size.name;
        benchmark::RegisterBenchmark(name.c_str(), bench_reduce, dcDataType_t(dt), dcRedOp_t(op), size.bytes);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("kernel_isa", dc::kernels::active_isa());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
