// Error-feedback state of one buffer: what was not sent yet, in float32 whatever the buffer's
// type, carried from one encode to the next (residual = beta * (input + residual - sent)). The
// caller owns it and keeps it across calls: the executor keys one per buffer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace dc::compression {

class Residual {
 public:
  explicit Residual(uint64_t count) : values_(count, 0.0f) {}

  uint64_t count() const { return values_.size(); }
  float* data() { return values_.data(); }
  const float* data() const { return values_.data(); }
  void reset() { std::fill(values_.begin(), values_.end(), 0.0f); }

 private:
  std::vector<float> values_;
};

}  // namespace dc::compression
