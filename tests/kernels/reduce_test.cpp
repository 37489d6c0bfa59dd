// reduce / finalize_avg / premultiply for every datatype and op, checked element by element against
// a reference computed here: integers in 64-bit arithmetic (wrapped to the width), floats in
// float64 then rounded to float32 (the working precision of the narrow formats) and to the type by
// the reference model. Every test runs on each instruction set built in, and on the public
// dispatching entry points.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/reduce.h"
#include "kernels/reduce_isa.h"
#include "tests/kernels/format_reference.h"

namespace dc::test {
namespace {

// ---- The kernel sets under test ----
struct KernelSet {
  std::string name;
  decltype(&dc::reduce) reduce;
  decltype(&dc::finalize_avg) finalize_avg;
  decltype(&dc::premultiply) premultiply;
};

void PrintTo(const KernelSet& k, std::ostream* os) { *os << k.name; }

std::vector<KernelSet> kernel_sets() {
  std::vector<KernelSet> sets = {
      {"dispatch", dc::reduce, dc::finalize_avg, dc::premultiply},
      {"baseline", kernels::baseline::reduce, kernels::baseline::finalize_avg, kernels::baseline::premultiply}};
#if defined(DEEPCOMM_KERNELS_AVX2)
  if (kernels::cpu_supports_avx2()) {
    sets.push_back({"avx2", kernels::avx2::reduce, kernels::avx2::finalize_avg, kernels::avx2::premultiply});
  }
#endif
  return sets;
}

// ---- Element values as raw bits, and their meaning per datatype ----
enum class Kind { Signed, Unsigned, Float32, Float64, Narrow };

struct TypeModel {
  dcDataType_t dt;
  size_t size;
  Kind kind;
  const FormatReference* format;  // Narrow only

  uint64_t mask() const { return size == 8 ? ~0ull : (1ull << (8 * size)) - 1; }
  bool is_int() const { return kind == Kind::Signed || kind == Kind::Unsigned; }

  int64_t as_signed(uint64_t bits) const {
    const int shift = 64 - 8 * int(size);
    return int64_t(bits << shift) >> shift;
  }
  double as_double(uint64_t bits) const {
    switch (kind) {
      case Kind::Float32: return std::bit_cast<float>(uint32_t(bits));
      case Kind::Float64: return std::bit_cast<double>(bits);
      default: return format->decode(uint32_t(bits));
    }
  }
  // The bits a kernel must produce for the exact result r of one float op: float64 keeps r,
  // the others compute in float32, and narrow formats then round to their format.
  uint64_t expected_bits(double r) const {
    if (kind == Kind::Float64) return std::bit_cast<uint64_t>(r);
    const float f = float(r);
    if (kind == Kind::Float32) return std::bit_cast<uint32_t>(f);
    return format->round(f);
  }
  bool is_nan(uint64_t bits) const { return !is_int() && std::isnan(as_double(bits)); }
};

std::vector<TypeModel> type_models() {
  return {
      {dcInt8, 1, Kind::Signed, nullptr},
      {dcUint8, 1, Kind::Unsigned, nullptr},
      {dcInt32, 4, Kind::Signed, nullptr},
      {dcUint32, 4, Kind::Unsigned, nullptr},
      {dcInt64, 8, Kind::Signed, nullptr},
      {dcUint64, 8, Kind::Unsigned, nullptr},
      {dcFloat16, 2, Kind::Narrow, &half_reference()},
      {dcFloat32, 4, Kind::Float32, nullptr},
      {dcFloat64, 8, Kind::Float64, nullptr},
      {dcBfloat16, 2, Kind::Narrow, &bf16_reference()},
      {dcFloat8e4m3, 1, Kind::Narrow, &e4m3_reference()},
      {dcFloat8e5m2, 1, Kind::Narrow, &e5m2_reference()},
  };
}

// Random input: any bit pattern (NaN, inf, subnormals included) a quarter of the time, otherwise a
// moderate value so sums and products round in interesting ways instead of overflowing.
uint64_t random_element(const TypeModel& t, std::mt19937_64& rng) {
  const uint64_t bits = rng() & t.mask();
  if (t.is_int() || rng() % 4 == 0) return bits;
  const double v = std::uniform_real_distribution<double>(-20.0, 20.0)(rng);
  switch (t.kind) {
    case Kind::Float32: return std::bit_cast<uint32_t>(float(v));
    case Kind::Float64: return std::bit_cast<uint64_t>(v);
    default: return t.format->round(v);
  }
}

// A buffer of count elements, starting one element past an aligned allocation when unaligned.
class Buffer {
 public:
  Buffer(const TypeModel& t, size_t count, bool unaligned)
      : t_(t), offset_(unaligned ? 1 : 0), bytes_((count + 1) * t.size) {}
  void* data() { return bytes_.data() + offset_ * t_.size; }
  uint64_t get(size_t i) const {
    uint64_t v = 0;
    std::memcpy(&v, bytes_.data() + (offset_ + i) * t_.size, t_.size);  // little endian
    return v;
  }
  void set(size_t i, uint64_t v) { std::memcpy(bytes_.data() + (offset_ + i) * t_.size, &v, t_.size); }

 private:
  const TypeModel& t_;
  size_t offset_;
  std::vector<unsigned char> bytes_;
};

// ---- Reference operations ----
uint64_t reference_int_op(const TypeModel& t, dcRedOp_t op, uint64_t a, uint64_t b) {
  const bool a_less = t.kind == Kind::Signed ? t.as_signed(a) < t.as_signed(b) : a < b;
  switch (op) {
    case dcSum:
    case dcAvg: return (a + b) & t.mask();
    case dcProd: return (a * b) & t.mask();
    case dcMax: return a_less ? b : a;
    default: return a_less ? a : b;
  }
}

double reference_float_op(dcRedOp_t op, double a, double b) {
  switch (op) {
    case dcSum:
    case dcAvg: return a + b;
    case dcProd: return a * b;
    case dcMax: return (a > b || std::isnan(a)) ? a : b;
    default: return (a < b || std::isnan(a)) ? a : b;
  }
}

// Checks got against the exact result (float kinds) or expected bits (integers).
void expect_element(const TypeModel& t, uint64_t got, uint64_t int_expected, double float_exact,
                    const std::string& where) {
  if (t.is_int()) {
    ASSERT_EQ(got, int_expected) << where;
  } else if (std::isnan(float_exact)) {
    ASSERT_TRUE(t.is_nan(got)) << where << " expected NaN, got bits " << got;
  } else {
    ASSERT_EQ(got, t.expected_bits(float_exact)) << where << " exact " << float_exact;
  }
}

const size_t kCounts[] = {0, 1, 7, 13, 1000, 4099};
const dcRedOp_t kOps[] = {dcSum, dcProd, dcMax, dcMin, dcAvg};

enum class Layout { Distinct, DstIsA, DstIsB, Unaligned };
const Layout kLayouts[] = {Layout::Distinct, Layout::DstIsA, Layout::DstIsB, Layout::Unaligned};
const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Distinct: return "distinct";
    case Layout::DstIsA: return "dst==a";
    case Layout::DstIsB: return "dst==b";
    default: return "unaligned";
  }
}

class KernelReduce : public ::testing::TestWithParam<KernelSet> {};

TEST_P(KernelReduce, EveryTypeOpCountAndLayoutMatchesReference) {
  const KernelSet& k = GetParam();
  std::mt19937_64 rng(42);
  for (const TypeModel& t : type_models()) {
    for (dcRedOp_t op : kOps) {
      for (size_t count : kCounts) {
        for (Layout layout : kLayouts) {
          const bool unaligned = layout == Layout::Unaligned;
          Buffer a(t, count, unaligned), b(t, count, unaligned), out(t, count, unaligned);
          std::vector<uint64_t> av(count), bv(count);
          for (size_t i = 0; i < count; ++i) {
            a.set(i, av[i] = random_element(t, rng));
            b.set(i, bv[i] = random_element(t, rng));
          }
          void* dst = layout == Layout::DstIsA ? a.data() : layout == Layout::DstIsB ? b.data() : out.data();
          k.reduce(t.dt, op, dst, a.data(), b.data(), count);
          const Buffer& result = layout == Layout::DstIsA ? a : layout == Layout::DstIsB ? b : out;
          for (size_t i = 0; i < count; ++i) {
            const std::string where = std::string(datatype_name(t.dt)) + " " + redop_name(op) + " count " +
                                      std::to_string(count) + " " + layout_name(layout) + " element " +
                                      std::to_string(i);
            const uint64_t int_expected = t.is_int() ? reference_int_op(t, op, av[i], bv[i]) : 0;
            const double exact = t.is_int() ? 0.0 : reference_float_op(op, t.as_double(av[i]), t.as_double(bv[i]));
            expect_element(t, result.get(i), int_expected, exact, where);
          }
        }
      }
    }
  }
}

TEST_P(KernelReduce, AvgDividesOnceAndTruncatesIntegers) {
  const KernelSet& k = GetParam();
  std::mt19937_64 rng(5);
  for (const TypeModel& t : type_models()) {
    for (int nranks : {1, 2, 3, 7, 1000}) {
      const size_t count = 1000;
      Buffer a(t, count, false), b(t, count, false);
      std::vector<uint64_t> av(count), bv(count);
      for (size_t i = 0; i < count; ++i) {
        a.set(i, av[i] = random_element(t, rng));
        b.set(i, bv[i] = random_element(t, rng));
      }
      k.reduce(t.dt, dcAvg, a.data(), a.data(), b.data(), count);
      k.finalize_avg(t.dt, a.data(), count, nranks);
      for (size_t i = 0; i < count; ++i) {
        const std::string where =
            std::string(datatype_name(t.dt)) + " nranks " + std::to_string(nranks) + " element " + std::to_string(i);
        if (t.is_int()) {
          const uint64_t sum = reference_int_op(t, dcSum, av[i], bv[i]);
          const uint64_t expected =
              t.kind == Kind::Signed ? uint64_t(t.as_signed(sum) / nranks) & t.mask() : sum / uint64_t(nranks);
          ASSERT_EQ(a.get(i), expected) << where;
        } else {
          // The sum is stored in the type first, then divided in the working precision.
          const double exact_sum = t.as_double(av[i]) + t.as_double(bv[i]);
          const double exact = std::isnan(exact_sum) ? NAN : t.as_double(t.expected_bits(exact_sum)) / nranks;
          expect_element(t, a.get(i), 0, exact, where);
        }
      }
    }
  }
}

TEST_P(KernelReduce, IntegerEdgeCases) {
  const KernelSet& k = GetParam();
  int8_t a8 = 127, b8 = 1, out8 = 0;
  k.reduce(dcInt8, dcSum, &out8, &a8, &b8, 1);
  EXPECT_EQ(out8, -128);
  uint8_t ua = 200, ub = 100, uo = 0;
  k.reduce(dcUint8, dcProd, &uo, &ua, &ub, 1);
  EXPECT_EQ(uo, uint8_t(20000 % 256));
  int64_t big = INT64_MAX, one = 1, out64 = 0;
  k.reduce(dcInt64, dcSum, &out64, &big, &one, 1);
  EXPECT_EQ(out64, INT64_MIN);

  int8_t m7[] = {-7, 7};
  k.finalize_avg(dcInt8, m7, 2, 2);
  EXPECT_EQ(m7[0], -3);
  EXPECT_EQ(m7[1], 3);
  int32_t m32[] = {-7, INT32_MIN};
  k.finalize_avg(dcInt32, m32, 2, 2);
  EXPECT_EQ(m32[0], -3);
  EXPECT_EQ(m32[1], INT32_MIN / 2);
  int64_t m64 = -7;
  k.finalize_avg(dcInt64, &m64, 1, 2);
  EXPECT_EQ(m64, -3);
  uint8_t u8 = 255;
  k.finalize_avg(dcUint8, &u8, 1, 300);  // nranks does not fit the type
  EXPECT_EQ(u8, 0);
}

TEST_P(KernelReduce, MinMaxPropagateNanForEveryFloatType) {
  const KernelSet& k = GetParam();
  for (const TypeModel& t : type_models()) {
    if (t.is_int()) continue;
    // All-ones magnitude: a NaN in every float format.
    const uint64_t nan = t.mask() >> 1;
    const uint64_t one = t.expected_bits(1.0);
    ASSERT_TRUE(t.is_nan(nan)) << datatype_name(t.dt);
    for (dcRedOp_t op : {dcMax, dcMin}) {
      Buffer a(t, 2, false), b(t, 2, false), out(t, 2, false);
      a.set(0, nan), b.set(0, one);  // NaN first
      a.set(1, one), b.set(1, nan);  // NaN second
      k.reduce(t.dt, op, out.data(), a.data(), b.data(), 2);
      EXPECT_TRUE(t.is_nan(out.get(0))) << datatype_name(t.dt) << " " << redop_name(op);
      EXPECT_TRUE(t.is_nan(out.get(1))) << datatype_name(t.dt) << " " << redop_name(op);
    }
  }
}

TEST_P(KernelReduce, Fp8SumSaturates) {
  const KernelSet& k = GetParam();
  uint8_t a[] = {float_to_fp8e4m3(448.0f), float_to_fp8e4m3(-448.0f)};
  uint8_t out[2];
  k.reduce(dcFloat8e4m3, dcSum, out, a, a, 2);
  EXPECT_EQ(out[0], 0x7e);
  EXPECT_EQ(out[1], 0xfe);
  uint8_t c[] = {float_to_fp8e5m2(57344.0f)};
  k.reduce(dcFloat8e5m2, dcSum, c, c, c, 1);
  EXPECT_EQ(c[0], 0x7b);
}

TEST_P(KernelReduce, PremultiplyEveryType) {
  const KernelSet& k = GetParam();
  std::mt19937_64 rng(9);
  for (const TypeModel& t : type_models()) {
    for (size_t count : kCounts) {
      for (bool in_place : {false, true}) {
        Buffer src(t, count, !in_place), out(t, count, false);
        std::vector<uint64_t> sv(count);
        for (size_t i = 0; i < count; ++i) src.set(i, sv[i] = random_element(t, rng));
        const uint64_t scalar = random_element(t, rng);
        Buffer scalar_buf(t, 1, true);  // scalars may be unaligned too
        scalar_buf.set(0, scalar);
        Buffer& result = in_place ? src : out;
        k.premultiply(t.dt, result.data(), src.data(), count, scalar_buf.data());
        for (size_t i = 0; i < count; ++i) {
          const std::string where =
              std::string(datatype_name(t.dt)) + " count " + std::to_string(count) + " element " + std::to_string(i);
          const uint64_t int_expected = t.is_int() ? (sv[i] * scalar) & t.mask() : 0;
          const double exact = t.is_int() ? 0.0 : t.as_double(sv[i]) * t.as_double(scalar);
          expect_element(t, result.get(i), int_expected, exact, where);
        }
      }
    }
  }
}

// The vector conversion paths (F16C for half) agree with the scalar conversions on every pattern:
// multiplying by one must return each non-NaN pattern unchanged, and halving every pattern must
// round like the reference (this covers ties and subnormals).
TEST_P(KernelReduce, VectorConversionsCoverEveryPattern) {
  const KernelSet& k = GetParam();
  for (const TypeModel& t : type_models()) {
    if (t.kind != Kind::Narrow) continue;
    const size_t count = 2 * t.format->magnitude_codes();
    Buffer all(t, count, false), out(t, count, false), scalar(t, 1, false);
    for (size_t i = 0; i < count; ++i) all.set(i, i);
    scalar.set(0, t.format->round(1.0));
    k.premultiply(t.dt, out.data(), all.data(), count, scalar.data());
    for (size_t i = 0; i < count; ++i) {
      if (t.is_nan(i)) {
        ASSERT_TRUE(t.is_nan(out.get(i))) << datatype_name(t.dt) << " pattern " << i;
      } else {
        ASSERT_EQ(out.get(i), i) << datatype_name(t.dt);
      }
    }
    scalar.set(0, t.format->round(0.5));
    k.premultiply(t.dt, out.data(), all.data(), count, scalar.data());
    for (size_t i = 0; i < count; ++i) {
      expect_element(t, out.get(i), 0, t.as_double(i) * 0.5,
                     std::string(datatype_name(t.dt)) + " halving pattern " + std::to_string(i));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, KernelReduce, ::testing::ValuesIn(kernel_sets()),
                         [](const ::testing::TestParamInfo<KernelSet>& info) { return info.param.name; });

TEST(KernelDispatch, RejectsUnknownTypeOpAndRankCount) {
  float x = 1.0f;
  EXPECT_THROW(dc::reduce(dcNumTypes, dcSum, &x, &x, &x, 1), dc::Error);
  EXPECT_THROW(dc::reduce(dcFloat32, dcNumOps, &x, &x, &x, 1), dc::Error);
  EXPECT_THROW(dc::finalize_avg(dcInt32, &x, 1, 0), dc::Error);
  EXPECT_THROW(dc::premultiply(dcDataType_t(-1), &x, &x, 1, &x), dc::Error);
  // Count 0 touches nothing, whatever the pointers.
  dc::reduce(dcFloat16, dcSum, nullptr, nullptr, nullptr, 0);
  dc::finalize_avg(dcInt64, nullptr, 0, 3);
  dc::premultiply(dcFloat8e4m3, nullptr, nullptr, 0, &x);
  EXPECT_EQ(x, 1.0f);
}

TEST(KernelDispatch, UsesAvx2WhereTheCpuHasIt) {
#if defined(DEEPCOMM_KERNELS_AVX2)
  EXPECT_STREQ(kernels::active_isa(), kernels::cpu_supports_avx2() ? "avx2" : "baseline");
#else
  EXPECT_STREQ(kernels::active_isa(), "baseline");
#endif
}

}  // namespace
}  // namespace dc::test
