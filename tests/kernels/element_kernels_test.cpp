// The kernel bodies of kernels/element_kernels.h (what the CUDA plugin's kernels run) executed on
// the CPU through the block emulator, bit for bit against the CPU loops (kernels/reduce.h; NaN as
// NaN, see both_nan): every
// datatype x op (sum, prod, max, min, avg, premulsum), sizes around the 16-byte pack, pointers off
// the 16-byte boundary (alike and unlike), dst aliasing a source, NaN, infinities and subnormals,
// several grid shapes, and the emulator's OS-thread mode.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/block_emulator.h"
#include "kernels/element_kernels.h"
#include "kernels/reduce.h"

namespace dc::test {
namespace {

using namespace dc::kernels;

constexpr dcDataType_t kTypes[] = {dcInt8,    dcUint8,   dcInt32,   dcUint32,   dcInt64,      dcUint64,
                                   dcFloat16, dcFloat32, dcFloat64, dcBfloat16, dcFloat8e4m3, dcFloat8e5m2};
// 0, 1, odd, one short of / one past a pack of bytes, and larger ones that are no multiple of it.
constexpr size_t kSizes[] = {0, 1, 7, 15, 17, 100, 1029, 4099};
constexpr GridShape kGrids[] = {{1, 1}, {1, 32}, {3, 5}, {7, 64}, {2, 256}};

// Element offsets of dst, a and b from a 16-byte boundary: alike (head, packs, tail) and unlike
// (one element at a time).
struct Offsets {
  size_t dst, a, b;
};
constexpr Offsets kOffsets[] = {{0, 0, 0}, {1, 1, 1}, {3, 3, 3}, {0, 1, 0}, {2, 0, 5}, {1, 2, 3}};

enum class Alias { None, DstIsA, DstIsB };

// A 16-byte-aligned arena with room for an offset of up to 16 elements.
class Buffer {
 public:
  Buffer(size_t elements, size_t element_size) : bytes_((elements + 16) * element_size + 16) {}
  void* at(size_t offset_elements, size_t element_size) {
    const uintptr_t base = (reinterpret_cast<uintptr_t>(bytes_.data()) + 15) & ~uintptr_t(15);
    return reinterpret_cast<void*>(base + offset_elements * element_size);
  }

 private:
  std::vector<uint8_t> bytes_;
};

// Values the formats treat specially: NaN, infinities, zeros of both signs, subnormals of float32,
// of the narrow formats and of float64, the largest finite values.
template <class Fmt>
std::vector<typename Fmt::Bits> special_values() {
  using Bits = typename Fmt::Bits;
  using C = typename Fmt::Compute;
  if constexpr (std::is_integral_v<C>) {
    return {std::numeric_limits<C>::min(), std::numeric_limits<C>::max(), C(-1), C(0), C(1)};
  } else {
    const float f[] = {std::nanf(""), -std::nanf(""), INFINITY, -INFINITY, 0.f,   -0.f,    1e-40f, -3e-42f,
                       6e-8f,         -3e-5f,         1e-3f,    65504.f,   448.f, 57344.f, 3e38f,  1.5f};
    std::vector<Bits> v;
    for (float x : f) v.push_back(Bits(Fmt::narrow1(C(x))));
    if constexpr (std::is_same_v<C, double>) v.push_back(4.9e-324), v.push_back(-2.2e-310);
    return v;
  }
}

template <class Fmt>
void fill(void* p, size_t n, std::mt19937_64& rng) {
  using Bits = typename Fmt::Bits;
  const std::vector<Bits> specials = special_values<Fmt>();
  auto* out = static_cast<Bits*>(p);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    std::memcpy(&out[i], &r, sizeof(Bits));
    if (r % 5 == 0) out[i] = specials[(r >> 8) % specials.size()];
  }
}

// The scalar of premulsum, kept finite and small so that products stay in range for most inputs.
template <class Fmt>
typename Fmt::Bits premul_scalar() {
  using C = typename Fmt::Compute;
  if constexpr (std::is_integral_v<C>) return typename Fmt::Bits(C(3));
  else return typename Fmt::Bits(Fmt::narrow1(C(0.375)));
}

std::string describe(dcDataType_t dt, const char* op, size_t n, const Offsets& o, Alias alias, GridShape g) {
  return std::string(datatype_name(dt)) + " " + op + " n=" + std::to_string(n) + " offsets=" + std::to_string(o.dst) +
         "," + std::to_string(o.a) + "," + std::to_string(o.b) + " alias=" + std::to_string(int(alias)) +
         " grid=" + std::to_string(g.blocks) + "x" + std::to_string(g.threads);
}

// Runs one op both ways on identical inputs and compares the bytes of the outputs.
struct Case {
  dcDataType_t dt;
  dcRedOp_t op;  // dcNumOps stands for premulsum
  size_t n;
  Offsets offsets;
  Alias alias;
  GridShape grid;
  EmulatorMode mode;
};

// A NaN's sign and payload after arithmetic are the hardware's and the compiler's (x86 keeps the
// first operand's, which operand is first is the compiler's choice; a GPU returns its canonical
// NaN), so NaN results compare as NaN. Every other result compares bit for bit.
template <class Fmt>
bool both_nan(typename Fmt::Bits x, typename Fmt::Bits y) {
  if constexpr (std::is_integral_v<typename Fmt::Compute>) return false;
  else return std::isnan(Fmt::widen1(x)) && std::isnan(Fmt::widen1(y));
}

const char* op_name(dcRedOp_t op) { return op == dcNumOps ? "premulsum" : redop_name(op); }

template <class Fmt>
void run_case(const Case& c, std::mt19937_64& rng) {
  using Bits = typename Fmt::Bits;
  constexpr size_t w = sizeof(Bits);
  // Two copies of the inputs: one for the emulated kernels, one for the CPU loops.
  Buffer ka(c.n, w), kb(c.n, w), kd(c.n, w), ca(c.n, w), cb(c.n, w), cd(c.n, w);
  auto* a = static_cast<Bits*>(ka.at(c.offsets.a, w));
  auto* b = static_cast<Bits*>(kb.at(c.offsets.b, w));
  auto* d = static_cast<Bits*>(kd.at(c.offsets.dst, w));
  auto* ra = static_cast<Bits*>(ca.at(c.offsets.a, w));
  auto* rb = static_cast<Bits*>(cb.at(c.offsets.b, w));
  auto* rd = static_cast<Bits*>(cd.at(c.offsets.dst, w));
  fill<Fmt>(a, c.n, rng);
  fill<Fmt>(b, c.n, rng);
  std::memset(d, 0xa5, c.n * w);  // a sentinel: an element never written shows
  std::memcpy(ra, a, c.n * w);
  std::memcpy(rb, b, c.n * w);
  std::memcpy(rd, d, c.n * w);
  Bits* dst = c.alias == Alias::DstIsA ? a : c.alias == Alias::DstIsB ? b : d;
  Bits* ref_dst = c.alias == Alias::DstIsA ? ra : c.alias == Alias::DstIsB ? rb : rd;
  const int nranks = 3;

  if (c.op == dcNumOps) {  // premulsum: dst = a * scalar, then dst = dst + b
    const Bits scalar = premul_scalar<Fmt>();
    emulate_kernel(c.grid, c.mode, PremultiplyKernel<Fmt>{dst, a, scalar}, c.n);
    emulate_kernel(c.grid, c.mode, ReduceKernel<Fmt, Sum>{dst, dst, b}, c.n);
    premultiply(c.dt, ref_dst, ra, c.n, &scalar);
    reduce(c.dt, dcSum, ref_dst, ref_dst, rb, c.n);
  } else {
    with_reduce_op(c.op, [&](auto op) {
      emulate_kernel(c.grid, c.mode, ReduceKernel<Fmt, decltype(op)>{dst, a, b}, c.n);
    });
    reduce(c.dt, c.op, ref_dst, ra, rb, c.n);
    if (c.op == dcAvg) {
      emulate_kernel(c.grid, c.mode, FinalizeAvgKernel<Fmt>{dst, nranks}, c.n);
      finalize_avg(c.dt, ref_dst, c.n, nranks);
    }
  }
  for (size_t i = 0; i < c.n; ++i) {
    if (std::memcmp(&dst[i], &ref_dst[i], w) != 0 && !both_nan<Fmt>(dst[i], ref_dst[i])) {
      uint64_t got = 0, want = 0, x = 0, y = 0;
      std::memcpy(&got, &dst[i], w), std::memcpy(&want, &ref_dst[i], w);
      std::memcpy(&x, &ra[i], w), std::memcpy(&y, &rb[i], w);
      FAIL() << describe(c.dt, op_name(c.op), c.n, c.offsets, c.alias, c.grid) << ": element " << i << " (inputs 0x"
             << std::hex << x << ", 0x" << y << "): kernel 0x" << got << ", CPU loop 0x" << want;
    }
  }
}

void run(const Case& c, std::mt19937_64& rng) {
  ASSERT_TRUE(with_format(c.dt, [&](auto fmt) { run_case<decltype(fmt)>(c, rng); }));
}

constexpr dcRedOp_t kOps[] = {dcSum, dcProd, dcMax, dcMin, dcAvg, dcNumOps};

TEST(ElementKernels, EveryDatatypeAndOpMatchesTheCpuLoopsBitForBit) {
  std::mt19937_64 rng(0xe1e3);
  for (dcDataType_t dt : kTypes)
    for (dcRedOp_t op : kOps)
      for (size_t n : kSizes)
        for (const Offsets& o : kOffsets)
          for (const GridShape& g : kGrids) {
            run(Case{dt, op, n, o, Alias::None, g, EmulatorMode::Sequential}, rng);
            if (HasFatalFailure()) return;
          }
}

TEST(ElementKernels, DstMayAliasEitherSource) {
  std::mt19937_64 rng(0xa11a5);
  for (dcDataType_t dt : kTypes)
    for (dcRedOp_t op : kOps)
      for (size_t n : {size_t(1), size_t(17), size_t(1029)})
        for (const Offsets& o : {Offsets{0, 0, 0}, Offsets{2, 2, 2}, Offsets{1, 1, 3}})
          for (Alias alias : {Alias::DstIsA, Alias::DstIsB}) {
            // An aliased dst has its source's offset.
            const Offsets aliased{alias == Alias::DstIsA ? o.a : o.b, o.a, o.b};
            run(Case{dt, op, n, aliased, alias, GridShape{3, 32}, EmulatorMode::Sequential}, rng);
            if (HasFatalFailure()) return;
          }
}

// Each emulated thread on its own OS thread: the results must not change, and under
// ThreadSanitizer (docs/gpu.md) two threads touching one element would be reported.
TEST(ElementKernels, OsThreadPerEmulatedThreadGivesTheSameBits) {
  std::mt19937_64 rng(0x7457);
  for (dcDataType_t dt : kTypes)
    for (dcRedOp_t op : kOps)
      for (size_t n : {size_t(17), size_t(300)}) {
        run(Case{dt, op, n, Offsets{1, 1, 1}, Alias::DstIsA, GridShape{2, 4}, EmulatorMode::Threads}, rng);
        if (HasFatalFailure()) return;
      }
}

// The packs really are used when the pointers allow it: a kernel over 16-byte-aligned float
// buffers splits into packs only, one unaligned alike into head, packs and tail, and unlike
// offsets into single elements; work_items sizes a grid by that.
TEST(ElementKernels, SplitsIntoHeadPacksAndTail) {
  alignas(16) float x[64] = {}, y[64] = {};
  const ReduceKernel<Native<float>, Sum> aligned{x, x, y};
  PackSplit s = aligned.split(64);
  EXPECT_EQ(s.head, 0u);
  EXPECT_EQ(s.packs, 16u);
  EXPECT_EQ(work_items(aligned, 64), 16u);
  const ReduceKernel<Native<float>, Sum> alike{x + 1, x + 1, y + 1};
  s = alike.split(63);
  EXPECT_EQ(s.head, 3u);
  EXPECT_EQ(s.packs, 15u);  // 3 + 60 elements, none left over
  const ReduceKernel<Native<float>, Sum> unlike{x, x + 1, y};
  s = unlike.split(63);
  EXPECT_EQ(s.head, 63u);
  EXPECT_EQ(s.packs, 0u);
  EXPECT_EQ(work_items(unlike, 63), 63u);
  EXPECT_EQ(work_items(aligned, 0), 0u);
}

TEST(ElementKernels, UnknownDatatypeOrOpIsRefused) {
  EXPECT_FALSE(with_format(dcNumTypes, [](auto) {}));
  EXPECT_FALSE(with_reduce_op(dcNumOps, [](auto) {}));
}

}  // namespace
}  // namespace dc::test
