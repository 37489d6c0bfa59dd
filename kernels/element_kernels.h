// The bodies of the element kernels (reduce, pre-multiply, finalize of an average), written once:
// the CUDA plugin's __global__ functions call them with blockIdx/blockDim/threadIdx/gridDim
// (plugins/cuda/element_launch.cu), and the CPU runs them over every block and thread
// (block_emulator.h) in the tests, bit for bit against the CPU loops (reduce.h). What a thread
// does to one element is element_ops.h's, so the results are the CPU's.
//
// Partition. Each thread handles 16-byte packs in a grid-stride loop. When every pointer of a
// kernel has the same offset within 16 bytes, the elements before dst's first 16-byte boundary
// (the head) and after its last full pack (the tail) are done one by one, the packs between them
// with 16-byte loads and stores. Pointers with different offsets are done one element at a time.
// Every pointer must be aligned to its element (the plugin checks it), and dst may alias a source
// exactly, never partly: a thread reads a whole pack before it writes it, and no two threads touch
// the same element.
#pragma once

#include <cstddef>
#include <cstdint>

#include "deepcomm/deepcomm.h"
#include "kernels/element_ops.h"
#include "kernels/host_device.h"

namespace dc::kernels {
namespace {

// One thread's place in the grid: CUDA's blockIdx.x, gridDim.x, threadIdx.x and blockDim.x.
struct ThreadCoords {
  uint32_t block = 0;
  uint32_t blocks = 1;
  uint32_t thread = 0;
  uint32_t threads = 1;

  DC_HOST_DEVICE size_t first() const { return size_t(block) * threads + thread; }
  DC_HOST_DEVICE size_t stride() const { return size_t(blocks) * threads; }
};

constexpr size_t kPackBytes = 16;

// 16 bytes of elements, loaded and stored whole (one 128-bit access on the GPU).
template <class Bits>
struct alignas(kPackBytes) Pack {
  static constexpr size_t kCount = kPackBytes / sizeof(Bits);
  Bits e[kCount];
};

// The split of n elements into head, packs and tail, the same for every thread of a kernel.
struct PackSplit {
  size_t head = 0;   // elements before the first pack
  size_t packs = 0;  // whole packs after the head (0 when the pointers' offsets differ)
  size_t n = 0;

  // misaligned: whether the pointers' offsets within 16 bytes differ; offset: dst's.
  template <class Bits>
  DC_HOST_DEVICE static PackSplit of(size_t n, bool misaligned, uintptr_t offset) {
    PackSplit s;
    s.n = n;
    if (misaligned) {
      s.head = n;
      return s;
    }
    const size_t to_boundary = ((kPackBytes - offset) % kPackBytes) / sizeof(Bits);
    s.head = to_boundary < n ? to_boundary : n;
    s.packs = (n - s.head) / Pack<Bits>::kCount;
    return s;
  }
};

DC_HOST_DEVICE inline uintptr_t pack_offset(const void* p) { return reinterpret_cast<uintptr_t>(p) % kPackBytes; }

// Runs kernel.element(i) for the head and tail elements and kernel.pack(i) for the packs (i: the
// pack's first element) that are this thread's.
template <class Bits, class Kernel>
DC_HOST_DEVICE void run_split(const ThreadCoords& t, const PackSplit& s, const Kernel& kernel) {
  const size_t first = t.first(), stride = t.stride();
  for (size_t i = first; i < s.head; i += stride) kernel.element(i);
  for (size_t p = first; p < s.packs; p += stride) kernel.pack(s.head + p * Pack<Bits>::kCount);
  for (size_t i = s.head + s.packs * Pack<Bits>::kCount + first; i < s.n; i += stride) kernel.element(i);
}

template <class Bits>
DC_HOST_DEVICE Pack<Bits> load_pack(const Bits* p) {
  return *reinterpret_cast<const Pack<Bits>*>(p);
}
template <class Bits>
DC_HOST_DEVICE void store_pack(Bits* p, const Pack<Bits>& v) {
  *reinterpret_cast<Pack<Bits>*>(p) = v;
}

// ---- The three kernels: their pointers and what they do to one element or pack ----
template <class Fmt, class Op>
struct ReduceKernel {  // dst = a op b
  using Bits = typename Fmt::Bits;
  Bits* dst;
  const Bits* a;
  const Bits* b;

  DC_HOST_DEVICE void element(size_t i) const { dst[i] = reduce_element<Fmt, Op>(a[i], b[i]); }
  DC_HOST_DEVICE void pack(size_t i) const {
    Pack<Bits> x = load_pack(a + i);
    const Pack<Bits> y = load_pack(b + i);
    for (size_t k = 0; k < Pack<Bits>::kCount; ++k) x.e[k] = reduce_element<Fmt, Op>(x.e[k], y.e[k]);
    store_pack(dst + i, x);
  }
  DC_HOST_DEVICE PackSplit split(size_t n) const {
    const uintptr_t o = pack_offset(dst);
    return PackSplit::of<Bits>(n, pack_offset(a) != o || pack_offset(b) != o, o);
  }
};

template <class Fmt>
struct PremultiplyKernel {  // dst = src * scalar
  using Bits = typename Fmt::Bits;
  Bits* dst;
  const Bits* src;
  Bits scalar;

  DC_HOST_DEVICE void element(size_t i) const { dst[i] = premul_element<Fmt>(src[i], scalar); }
  DC_HOST_DEVICE void pack(size_t i) const {
    Pack<Bits> x = load_pack(src + i);
    for (size_t k = 0; k < Pack<Bits>::kCount; ++k) x.e[k] = premul_element<Fmt>(x.e[k], scalar);
    store_pack(dst + i, x);
  }
  DC_HOST_DEVICE PackSplit split(size_t n) const {
    const uintptr_t o = pack_offset(dst);
    return PackSplit::of<Bits>(n, pack_offset(src) != o, o);
  }
};

template <class Fmt>
struct FinalizeAvgKernel {  // buf = buf / nranks
  using Bits = typename Fmt::Bits;
  Bits* buf;
  int nranks;

  DC_HOST_DEVICE void element(size_t i) const { buf[i] = avg_element<Fmt>(buf[i], nranks); }
  DC_HOST_DEVICE void pack(size_t i) const {
    Pack<Bits> x = load_pack(buf + i);
    for (size_t k = 0; k < Pack<Bits>::kCount; ++k) x.e[k] = avg_element<Fmt>(x.e[k], nranks);
    store_pack(buf + i, x);
  }
  DC_HOST_DEVICE PackSplit split(size_t n) const { return PackSplit::of<Bits>(n, false, pack_offset(buf)); }
};

// ---- Kernel bodies: one thread's share of a kernel over n elements ----
template <class Kernel>
DC_HOST_DEVICE void run_kernel(const ThreadCoords& t, const Kernel& kernel, size_t n) {
  run_split<typename Kernel::Bits>(t, kernel.split(n), kernel);
}

// The number of work items (packs, or elements when they are done one by one) of a kernel over n
// elements: how many threads have something to do. The launcher sizes its grid by it.
template <class Kernel>
DC_HOST_DEVICE size_t work_items(const Kernel& kernel, size_t n) {
  const PackSplit s = kernel.split(n);
  const size_t singles = s.n - s.packs * Pack<typename Kernel::Bits>::kCount;
  return s.packs > singles ? s.packs : singles;
}

// ---- From the run-time datatype and op to the formats and ops above (host code) ----
// Calls f(Fmt{}) with the format of dt; false for an unknown datatype.
template <class F>
bool with_format(dcDataType_t dt, F&& f) {
  switch (dt) {
    case dcInt8: return f(Native<int8_t>{}), true;
    case dcUint8: return f(Native<uint8_t>{}), true;
    case dcInt32: return f(Native<int32_t>{}), true;
    case dcUint32: return f(Native<uint32_t>{}), true;
    case dcInt64: return f(Native<int64_t>{}), true;
    case dcUint64: return f(Native<uint64_t>{}), true;
    case dcFloat16: return f(Half{}), true;
    case dcFloat32: return f(Native<float>{}), true;
    case dcFloat64: return f(Native<double>{}), true;
    case dcBfloat16: return f(Bf16{}), true;
    case dcFloat8e4m3: return f(E4m3{}), true;
    case dcFloat8e5m2: return f(E5m2{}), true;
    default: return false;
  }
}

// Calls f(Op{}) with the reduction of a built-in op (avg reduces as sum); false for another op.
template <class F>
bool with_reduce_op(dcRedOp_t op, F&& f) {
  switch (op) {
    case dcSum:
    case dcAvg: return f(Sum{}), true;
    case dcProd: return f(Prod{}), true;
    case dcMax: return f(Max{}), true;
    case dcMin: return f(Min{}), true;
    default: return false;
  }
}

}  // namespace
}  // namespace dc::kernels
