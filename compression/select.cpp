#include "compression/select.h"

#include <algorithm>
#include <cmath>

#include "compression/form/wire_format.h"
#include "compression/quantize.h"

namespace dc::compression {
namespace {

constexpr uint64_t kScanBlock = 65536;
constexpr unsigned kBucketShift = 20;  // 2048 buckets of magnitude bits: exponent + 3 mantissa bits

// Larger magnitude first, then lower index: one unique 64-bit key per element.
inline uint64_t key(const Candidate& c) {
  return (uint64_t(float_bits_of(c.value) & kAbsMask) << 32) | (0xffffffffu - c.index);
}
inline bool better(const Candidate& a, const Candidate& b) { return key(a) > key(b); }

}  // namespace

float accumulated_at(const AccumulatedView& in, uint64_t i) {
  float x;
  switch (in.type) {
    case ElemType::f16: x = load_elem<ElemType::f16>(in.x, i); break;
    case ElemType::bf16: x = load_elem<ElemType::bf16>(in.x, i); break;
    default: x = load_elem<ElemType::f32>(in.x, i); break;
  }
  return in.r ? x + in.r[i] : x;
}

uint32_t TopKSelector::sampled_threshold(const AccumulatedView& in, uint64_t count, uint64_t k) {
  const auto [samples, rank] = sample_plan(count, k);
  if (rank >= samples) return 0;
  std::vector<uint32_t> bits(samples);
  for (uint64_t j = 0; j < samples; ++j) {
    const uint32_t ab = float_bits_of(accumulated_at(in, sample_position(count, samples, j))) & kAbsMask;
    bits[j] = ab < kInfBits ? ab : 0;
  }
  std::nth_element(bits.begin(), bits.begin() + (rank - 1), bits.end(), std::greater<uint32_t>());
  return bits[rank - 1];
}

void TopKSelector::cut_to(uint64_t k) {
  if (held_ <= k) return;
  std::nth_element(cand_.begin(), cand_.begin() + (k - 1), cand_.begin() + held_, better);
  held_ = k;
}

void TopKSelector::scan(const CodecKernels& kernels, const AccumulatedView& in, uint64_t count, uint64_t k,
                        uint32_t thr_bits, float* r_out, float beta) {
  const uint64_t bound = std::max<uint64_t>(2 * k, kScanBlock);
  held_ = 0;
  nonfinite_.clear();
  std::vector<uint32_t> nonfinite_block(std::min(count, kScanBlock));
  for (uint64_t begin = 0; begin < count; begin += kScanBlock) {
    const uint64_t end = std::min(count, begin + kScanBlock);
    if (cand_.size() < held_ + (end - begin)) cand_.resize(held_ + (end - begin));
    const ScanCounts got =
        kernels.scan_candidates(in, begin, end, r_out, beta, thr_bits, cand_.data() + held_, nonfinite_block.data());
    held_ += got.candidates;
    nonfinite_.insert(nonfinite_.end(), nonfinite_block.begin(), nonfinite_block.begin() + got.nonfinite);
    if (held_ > bound) {
      // Later elements have higher indices, so they must beat the k-th magnitude strictly.
      cut_to(k);
      const uint32_t kth = float_bits_of(cand_[k - 1].value) & kAbsMask;
      thr_bits = std::max(thr_bits, kth + 1);
    }
  }
}

void TopKSelector::select(const CodecKernels& kernels, const AccumulatedView& in, uint64_t count, uint64_t k,
                          bool sampled, float* residual, float beta, Result& out) {
  out.kept.clear();
  out.nonfinite.clear();
  if (count == 0) return;
  if (sampled) {
    scan(kernels, in, count, k, sampled_threshold(in, count, k), residual, beta);
  } else {
    // Pass 1: a into the residual (when there is one) and a histogram of magnitudes; the bucket
    // where the count from the top reaches k bounds the scan of pass 2.
    hist_.assign(size_t(1) << (31 - kBucketShift), 0);
    kernels.accumulate_histogram(in, 0, count, residual, hist_.data());
    uint64_t above = 0;
    uint32_t bucket = uint32_t(hist_.size());
    while (bucket > 0 && above < k) above += hist_[--bucket];
    const AccumulatedView pass2 = residual ? AccumulatedView{residual, ElemType::f32, nullptr} : in;
    scan(kernels, pass2, count, k, bucket << kBucketShift, residual && beta != 1.0f ? residual : nullptr, beta);
  }
  cut_to(k);
  out.kept.assign(cand_.begin(), cand_.begin() + held_);
  std::sort(out.kept.begin(), out.kept.end(), [](const Candidate& a, const Candidate& b) { return a.index < b.index; });
  // Non-finite elements are always sent; their residual restarts at 0. The residual (beta * a or
  // a) keeps a's class, and NaN is made canonical, as a GPU's arithmetic would.
  for (uint32_t i : nonfinite_) {
    float v = residual ? residual[i] : accumulated_at(in, i);
    if (residual) residual[i] = 0.0f;
    if (std::isnan(v)) v = float_of_bits(wire::kCanonicalNaN);
    out.nonfinite.push_back({i, v});
  }
}

}  // namespace dc::compression
