#include "dc_types.h"

#include <c10/util/Exception.h>

namespace deepcomm_torch {
namespace {

bool datatype_of(at::ScalarType s, dcDataType_t* type, size_t* per_element) {
  *per_element = 1;
  switch (s) {
    case at::kChar: *type = dcInt8; return true;
    case at::kByte:
    case at::kBool: *type = dcUint8; return true;
    case at::kInt: *type = dcInt32; return true;
    case at::kUInt32: *type = dcUint32; return true;
    case at::kLong: *type = dcInt64; return true;
    case at::kUInt64: *type = dcUint64; return true;
    case at::kHalf: *type = dcFloat16; return true;
    case at::kFloat: *type = dcFloat32; return true;
    case at::kDouble: *type = dcFloat64; return true;
    case at::kBFloat16: *type = dcBfloat16; return true;
    case at::kFloat8_e4m3fn: *type = dcFloat8e4m3; return true;
    case at::kFloat8_e5m2: *type = dcFloat8e5m2; return true;
    case at::kComplexFloat:
      *type = dcFloat32;
      *per_element = 2;
      return true;
    case at::kComplexDouble:
      *type = dcFloat64;
      *per_element = 2;
      return true;
    default: return false;
  }
}

const char* name_of(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    default: return "this operator";
  }
}

}  // namespace

Reduction reduction_of(const at::Tensor& tensor, const c10d::ReduceOp& op) {
  Reduction r{};
  size_t per_element = 1;
  TORCH_CHECK(datatype_of(tensor.scalar_type(), &r.type, &per_element), "deepcomm: cannot reduce ",
              tensor.scalar_type(),
              " tensors (DeepComm reduces int8, uint8, bool, int32, uint32, int64, "
              "uint64, float16, bfloat16, float32, float64, float8 and complex)");
  r.count = static_cast<size_t>(tensor.numel()) * per_element;
  const bool is_bool = tensor.scalar_type() == at::kBool;
  const bool is_complex = per_element == 2;
  switch (op.op_) {
    case c10d::ReduceOp::SUM: r.op = is_bool ? dcMax : dcSum; break;
    case c10d::ReduceOp::PRODUCT: r.op = is_bool ? dcMin : dcProd; break;
    case c10d::ReduceOp::MIN: r.op = dcMin; break;
    case c10d::ReduceOp::MAX: r.op = dcMax; break;
    case c10d::ReduceOp::AVG: r.op = dcAvg; break;
    case c10d::ReduceOp::PREMUL_SUM: {
      auto* supplement = dynamic_cast<c10d::PreMulSumSupplement*>(op.supplement_.get());
      TORCH_CHECK(supplement, "deepcomm: PREMUL_SUM without its factor");
      r.factor =
          supplement->tensor_factor.defined() ? supplement->tensor_factor.item<double>() : supplement->double_factor;
      r.premul = true;
      r.op = dcSum;
      break;
    }
    default:
      TORCH_CHECK(false, "deepcomm: ReduceOp.", name_of(op.op_),
                  " is not supported (DeepComm reduces with SUM, PRODUCT, MIN, MAX, AVG and PREMUL_SUM)");
  }
  TORCH_CHECK(!is_bool || (r.op != dcAvg && !r.premul), "deepcomm: bool tensors reduce with SUM, PRODUCT, MIN or MAX");
  TORCH_CHECK(!is_complex || r.op == dcSum || r.op == dcAvg,
              "deepcomm: complex tensors reduce with SUM, AVG or PREMUL_SUM only");
  return r;
}

void make_premul_sum(Reduction& r, dcComm_t comm) {
  // The factor in the reduction's datatype (float16, bfloat16, float8 included), read by the call.
  static const std::pair<dcDataType_t, at::ScalarType> kScalarTypes[] = {{dcInt8, at::kChar},
                                                                         {dcUint8, at::kByte},
                                                                         {dcInt32, at::kInt},
                                                                         {dcUint32, at::kUInt32},
                                                                         {dcInt64, at::kLong},
                                                                         {dcUint64, at::kUInt64},
                                                                         {dcFloat16, at::kHalf},
                                                                         {dcFloat32, at::kFloat},
                                                                         {dcFloat64, at::kDouble},
                                                                         {dcBfloat16, at::kBFloat16},
                                                                         {dcFloat8e4m3, at::kFloat8_e4m3fn},
                                                                         {dcFloat8e5m2, at::kFloat8_e5m2}};
  at::ScalarType scalar_type = at::kFloat;
  for (const auto& [dc, torch_type] : kScalarTypes)
    if (dc == r.type) scalar_type = torch_type;
  at::Tensor scalar = at::full({1}, r.factor, at::TensorOptions().dtype(at::kDouble)).to(scalar_type);
  dcResult_t result = dcRedOpCreatePreMulSum(&r.op, scalar.data_ptr(), r.type, comm);
  TORCH_CHECK(result == dcSuccess, "deepcomm: PREMUL_SUM: ", dcGetErrorString(result), ": ", dcGetLastError());
}

void check_cpu(const at::Tensor& tensor, const char* op) {
  TORCH_CHECK(tensor.defined(), "deepcomm: ", op, ": undefined tensor");
  TORCH_CHECK(
      !tensor.is_cuda(), "deepcomm: ", op,
      ": the deepcomm backend takes CPU tensors; for CUDA tensors use the 'nccl' backend, "
      "which runs on DeepComm with its libnccl.so.2 preloaded (init_process_group(\"cpu:deepcomm,cuda:nccl\"))");
  TORCH_CHECK(tensor.device().is_cpu(), "deepcomm: ", op, ": only CPU tensors are supported, got a tensor on ",
              tensor.device());
  TORCH_CHECK(tensor.layout() == at::kStrided, "deepcomm: ", op, ": sparse tensors are not supported");
}

}  // namespace deepcomm_torch
