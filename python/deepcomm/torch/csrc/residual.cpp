#include "residual.h"

#include <c10/util/Exception.h>

namespace deepcomm_torch {

Residual::Residual(size_t count) : count_(count) {
  dcResult_t result = dcResidualCreate(&handle_, count);
  TORCH_CHECK(result == dcSuccess, "deepcomm: dcResidualCreate: ", dcGetErrorString(result), ": ", dcGetLastError());
}

Residual::~Residual() { dcResidualDestroy(handle_); }

void Residual::reset() {
  dcResult_t result = dcResidualReset(handle_);
  TORCH_CHECK(result == dcSuccess, "deepcomm: dcResidualReset: ", dcGetErrorString(result), ": ", dcGetLastError());
}

}  // namespace deepcomm_torch
