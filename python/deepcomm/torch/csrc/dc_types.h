// How torch's tensors and reduce operations map onto DeepComm's datatypes and operators.
// Data movement (broadcast, gathers, scatters, all-to-all, send/recv) moves bytes, so every dtype
// moves; reductions need a DeepComm datatype and operator, and anything else is refused here, in
// the calling thread, with a message that names what is not supported.
#pragma once

#include <ATen/ATen.h>
#include <deepcomm/deepcomm.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

namespace deepcomm_torch {

// A reduction of one contiguous tensor: the DeepComm datatype, element count and operator.
// Complex tensors reduce as pairs of reals; bool reduces as uint8 with SUM as MAX and PRODUCT as
// MIN (logical or / and, as ProcessGroupNCCL does).
struct Reduction {
  dcDataType_t type;
  size_t count;
  dcRedOp_t op;         // for PREMUL_SUM: made by make_premul_sum() before the call
  bool premul = false;  // op must be created (dcRedOpCreatePreMulSum) and destroyed around the call
  double factor = 1.0;  // the PREMUL_SUM factor
};

// Throws (c10::Error, a Python RuntimeError) for a dtype or operator DeepComm cannot reduce.
Reduction reduction_of(const at::Tensor& tensor, const c10d::ReduceOp& op);

// Creates the PREMUL_SUM operator of r on comm (r.op is set); throws on failure.
void make_premul_sum(Reduction& r, dcComm_t comm);

// Throws unless the tensor is on the CPU (CUDA tensors wait for the GPU path).
void check_cpu(const at::Tensor& tensor, const char* op);

// Bytes of a tensor's elements.
inline size_t bytes_of(const at::Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

}  // namespace deepcomm_torch
