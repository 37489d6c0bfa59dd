// The per-element functions of kernels/element_ops.h (reduce_element, avg_element,
// premul_element: what a CUDA kernel's thread will run) executed on the CPU, bit for bit against
// the CPU loops of every instruction set built in, for every datatype and op, on random bit
// patterns (NaN, infinities and subnormals included).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/element_ops.h"
#include "kernels/reduce.h"
#include "kernels/reduce_isa.h"

namespace dc::test {
namespace {

using namespace dc::kernels;

struct Loops {
  std::string name;
  decltype(&dc::reduce) reduce;
  decltype(&dc::finalize_avg) finalize_avg;
  decltype(&dc::premultiply) premultiply;
};

std::vector<Loops> loop_sets() {
  std::vector<Loops> sets = {{"baseline", baseline::reduce, baseline::finalize_avg, baseline::premultiply}};
#if defined(DEEPCOMM_KERNELS_AVX2)
  if (cpu_supports_avx2()) {
    sets.push_back({"avx2", avx2::reduce, avx2::finalize_avg, avx2::premultiply});
  }
#endif
  return sets;
}

// Enough elements for full tiles, vector bodies and scalar tails.
constexpr size_t kCount = 2 * 512 + 37;

template <class Bits>
std::vector<Bits> random_bits(std::mt19937_64& rng) {
  std::vector<Bits> v(kCount);
  for (Bits& x : v) {
    const uint64_t r = rng();
    std::memcpy(&x, &r, sizeof(Bits));
  }
  return v;
}

template <class Bits>
void expect_same_bits(const std::vector<Bits>& loop, const std::vector<Bits>& element, const std::vector<Bits>& a,
                      const std::string& what) {
  for (size_t i = 0; i < kCount; ++i) {
    if (std::memcmp(&loop[i], &element[i], sizeof(Bits)) != 0) {
      uint64_t l = 0, e = 0, x = 0;
      std::memcpy(&l, &loop[i], sizeof(Bits));
      std::memcpy(&e, &element[i], sizeof(Bits));
      std::memcpy(&x, &a[i], sizeof(Bits));
      FAIL() << what << ": element " << i << " (input 0x" << std::hex << x << "): loop 0x" << l
             << ", element function 0x" << e;
    }
  }
}

template <class Fmt, class Op>
void check_reduce(const Loops& loops, dcDataType_t dt, dcRedOp_t op, std::mt19937_64& rng) {
  using Bits = typename Fmt::Bits;
  const std::vector<Bits> a = random_bits<Bits>(rng);
  const std::vector<Bits> b = random_bits<Bits>(rng);
  std::vector<Bits> loop(kCount), element(kCount);
  loops.reduce(dt, op, loop.data(), a.data(), b.data(), kCount);
  for (size_t i = 0; i < kCount; ++i) element[i] = reduce_element<Fmt, Op>(a[i], b[i]);
  expect_same_bits(loop, element, a, loops.name + " " + datatype_name(dt) + " " + redop_name(op));
}

template <class Fmt>
void check_format(const Loops& loops, dcDataType_t dt) {
  using Bits = typename Fmt::Bits;
  std::mt19937_64 rng(0x5eed0000u + unsigned(dt));
  check_reduce<Fmt, Sum>(loops, dt, dcSum, rng);
  check_reduce<Fmt, Prod>(loops, dt, dcProd, rng);
  check_reduce<Fmt, Max>(loops, dt, dcMax, rng);
  check_reduce<Fmt, Min>(loops, dt, dcMin, rng);
  for (const int nranks : {1, 3, 8, 1000}) {
    const std::vector<Bits> v = random_bits<Bits>(rng);
    std::vector<Bits> loop = v, element(kCount);
    loops.finalize_avg(dt, loop.data(), kCount, nranks);
    for (size_t i = 0; i < kCount; ++i) element[i] = avg_element<Fmt>(v[i], nranks);
    expect_same_bits(loop, element, v, loops.name + " " + datatype_name(dt) + " avg/" + std::to_string(nranks));
  }
  for (int k = 0; k < 4; ++k) {
    const std::vector<Bits> v = random_bits<Bits>(rng);
    const Bits scalar = random_bits<Bits>(rng)[0];
    std::vector<Bits> loop(kCount), element(kCount);
    loops.premultiply(dt, loop.data(), v.data(), kCount, &scalar);
    for (size_t i = 0; i < kCount; ++i) element[i] = premul_element<Fmt>(v[i], scalar);
    expect_same_bits(loop, element, v, loops.name + " " + datatype_name(dt) + " premulsum");
  }
}

class ElementOps : public ::testing::TestWithParam<Loops> {};

TEST_P(ElementOps, EveryTypeAndOpMatchesTheCpuLoopsBitForBit) {
  const Loops& loops = GetParam();
  check_format<Native<int8_t>>(loops, dcInt8);
  check_format<Native<uint8_t>>(loops, dcUint8);
  check_format<Native<int32_t>>(loops, dcInt32);
  check_format<Native<uint32_t>>(loops, dcUint32);
  check_format<Native<int64_t>>(loops, dcInt64);
  check_format<Native<uint64_t>>(loops, dcUint64);
  check_format<Half>(loops, dcFloat16);
  check_format<Native<float>>(loops, dcFloat32);
  check_format<Native<double>>(loops, dcFloat64);
  check_format<Bf16>(loops, dcBfloat16);
  check_format<E4m3>(loops, dcFloat8e4m3);
  check_format<E5m2>(loops, dcFloat8e5m2);
}

INSTANTIATE_TEST_SUITE_P(Isa, ElementOps, ::testing::ValuesIn(loop_sets()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace dc::test
