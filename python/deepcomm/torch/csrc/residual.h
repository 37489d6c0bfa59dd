// The error feedback of one buffer of the compressed all-reduce (dcResidual_t), owned: destroyed
// with the last reference, which every operation using it holds until it completed (DeepComm
// refuses to destroy a residual an operation still uses).
#pragma once

#include <deepcomm/deepcomm.h>

#include <cstddef>

namespace deepcomm_torch {

class Residual {
 public:
  explicit Residual(size_t count);  // throws c10::Error when DeepComm cannot create it
  ~Residual();
  Residual(const Residual&) = delete;
  Residual& operator=(const Residual&) = delete;

  dcResidual_t handle() const { return handle_; }
  size_t count() const { return count_; }
  void reset();  // zeroes the state

 private:
  dcResidual_t handle_ = nullptr;
  size_t count_;
};

}  // namespace deepcomm_torch
