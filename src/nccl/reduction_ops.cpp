// User-defined reduction operators of the NCCL ABI.
#include "src/nccl/api.h"
#include "src/nccl/device_runtime.h"

using dc::nccl::guarded;
using dc::nccl::require_output;
using dc::nccl::to_dc;
using dc::nccl::to_nccl;

// The scalar is read now (host-immediate). Device-resident scalars are read while the collective
// runs, which needs the GPU path.
DEEPCOMM_NCCL_API(ncclResult_t, ncclRedOpCreatePreMulSum, ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                  ncclScalarResidence_t residence, ncclComm_t comm) {
  return guarded([&] {
    require_output(op, "ncclRedOpCreatePreMulSum", "op");
    if (residence == ncclScalarDevice) {
      dc::fail(dcInvalidUsage,
               "DeepComm: ncclRedOpCreatePreMulSum: ncclScalarDevice is not supported yet; pass "
               "the scalar in host memory with ncclScalarHostImmediate");
    }
    if (residence != ncclScalarHostImmediate) {
      dc::fail(dcInvalidArgument, "DeepComm: ncclRedOpCreatePreMulSum: unknown scalar residence " +
                                      std::to_string(static_cast<int>(residence)));
    }
    dc::nccl::require_host_memory(scalar, "ncclRedOpCreatePreMulSum: a scalar");
    dcRedOp_t native = dcSum;
    const dcResult_t result = dcRedOpCreatePreMulSum(&native, scalar, to_dc(datatype), to_dc(comm));
    if (result == dcSuccess) *op = static_cast<ncclRedOp_t>(native);
    return to_nccl(result);
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclRedOpDestroy, ncclRedOp_t op, ncclComm_t comm) {
  return guarded([&] { return to_nccl(dcRedOpDestroy(to_dc(op), to_dc(comm))); });
}
