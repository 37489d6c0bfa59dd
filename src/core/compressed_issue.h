// The compressed all-reduce's side of issuing: residual handles of the native API (a registry, so
// a destroyed or bogus handle is an error, not a crash), the call's codec description, and the
// NCCL path (DEEPCOMM_COMPRESS), which keeps residuals in the communicator's store.
#pragma once

#include <memory>

#include "deepcomm/deepcomm.h"
#include "src/core/communicator.h"
#include "src/exec/compressed_call.h"
#include "src/exec/operation.h"

struct dcResidual {
  std::shared_ptr<dc::ResidualState> state;
};

namespace dc {

dcResidual* create_residual(size_t count);
// Throw dc::Error(dcInvalidArgument) for NULL or a handle that is not live, and
// dcInvalidUsage for one in use by a pending operation.
void reset_residual(dcResidual* residual);
void destroy_residual(dcResidual* residual);

// The codec side of dcCompressedAllReduce: checks the datatype, op, spec and residual (throws
// dc::Error(dcInvalidArgument) saying what is wrong).
std::shared_ptr<const CompressedCall> compressed_call(const OpArgs& args, const char* spec, dcResidual* residual,
                                                      dcCompressStats_t* stats);

// The spec DEEPCOMM_COMPRESS gives args, or null: for an all-reduce of float32, float16 or bfloat16
// with sum or avg, of at least DEEPCOMM_COMPRESS_MIN_BYTES and at most one message's elements.
const compression::Spec* configured_spec(const dcComm* comm, const OpArgs& args);

// args with DEEPCOMM_COMPRESS applied: a qualifying all-reduce gets the spec and, with ef, the
// residual of its buffer from the communicator's store. Anything else is unchanged.
OpArgs with_configured_compression(dcComm* comm, OpArgs args);

// While one lives on a thread, the all-reduces that thread issues key their residual by `buffer`
// instead of their send buffer: the stream bridge issues them on pinned copies of the user's device
// buffer, and the pinned blocks are shared by every call of their size.
class ResidualKeyScope {
 public:
  explicit ResidualKeyScope(const void* buffer);
  ~ResidualKeyScope();
  ResidualKeyScope(const ResidualKeyScope&) = delete;
  ResidualKeyScope& operator=(const ResidualKeyScope&) = delete;

 private:
  const void* outer_;
};

}  // namespace dc
