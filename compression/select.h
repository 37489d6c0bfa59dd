// Top-k selection over a = input + residual, ties broken by the lower index: exact (a radix
// histogram finds the boundary, then one scan) or sampled (DGC-style: a threshold estimated from
// a deterministic sample, one scan fused with the error-feedback update). Both keep candidates at
// or above a threshold and cut them to the k best whenever they grow past a bound, raising the
// threshold, so the result is the exact top-k of the elements the threshold admits: always k for
// exact; for sampled k unless the sample overestimated the threshold (then every element above it).
#pragma once

#include <cstdint>
#include <vector>

#include "compression/codec_isa.h"
#include "compression/sample_plan.h"

namespace dc::compression {

class TopKSelector {
 public:
  struct Result {
    std::vector<Candidate> kept;       // finite, sorted by index, value = a
    std::vector<Candidate> nonfinite;  // sorted by index, value = a (NaN canonical, +-Inf)
  };

  // residual (may be null): afterwards beta * a for every element, 0 where a is not finite (the
  // caller then sets the kept elements' residuals from what it sends).
  void select(const CodecKernels& kernels, const AccumulatedView& in, uint64_t count, uint64_t k, bool sampled,
              float* residual, float beta, Result& out);

  // The sampled threshold: magnitude bits at or above which about 4k elements of `count` lie
  // (more when k is small).
  static uint32_t sampled_threshold(const AccumulatedView& in, uint64_t count, uint64_t k);

 private:
  void scan(const CodecKernels& kernels, const AccumulatedView& in, uint64_t count, uint64_t k, uint32_t thr_bits,
            float* r_out, float beta);
  void cut_to(uint64_t k);

  std::vector<Candidate> cand_;
  std::vector<uint32_t> nonfinite_;
  std::vector<uint32_t> hist_;
  size_t held_ = 0;  // candidates in cand_
};

// a_i of `in`, one element at a time.
float accumulated_at(const AccumulatedView& in, uint64_t i);

}  // namespace dc::compression
