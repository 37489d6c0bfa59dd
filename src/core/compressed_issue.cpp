#include "src/core/compressed_issue.h"

#include <limits>
#include <mutex>
#include <set>
#include <string>

#include "kernels/reduce.h"
#include "src/core/settings.h"
#include "src/exec/residual_store.h"

namespace dc {

namespace {

std::mutex g_residuals_mutex;
std::set<dcResidual*> g_residuals;

std::shared_ptr<ResidualState> checked_residual(dcResidual* residual) {
  std::lock_guard<std::mutex> lock(g_residuals_mutex);
  if (!residual) fail(dcInvalidArgument, "DeepComm: residual is NULL");
  if (!g_residuals.count(residual))
    fail(dcInvalidArgument, "DeepComm: residual is not a live handle from dcResidualCreate (destroyed?)");
  return residual->state;
}

void check_idle(const ResidualState& state, const char* action) {
  if (state.in_use.load() > 0)
    fail(dcInvalidUsage, std::string("DeepComm: cannot ") + action +
                             " a residual while an operation using it is pending (wait for it first)");
}

bool compressible(dcDataType_t type, dcRedOp_t op) {
  return (type == dcFloat32 || type == dcFloat16 || type == dcBfloat16) && (op == dcSum || op == dcAvg);
}

// Elements one message holds at most (u32 offsets); the NCCL path leaves larger buffers dense.
constexpr uint64_t kMessageElements = std::numeric_limits<uint32_t>::max();

}  // namespace

dcResidual* create_residual(size_t count) {
  if (count == 0) fail(dcInvalidArgument, "DeepComm: a residual needs a count of at least 1");
  if (count > kMessageElements)
    fail(dcInvalidArgument, "DeepComm: a residual holds at most " + std::to_string(kMessageElements) + " elements");
  auto* handle = new dcResidual{std::make_shared<ResidualState>(count)};
  std::lock_guard<std::mutex> lock(g_residuals_mutex);
  g_residuals.insert(handle);
  return handle;
}

void reset_residual(dcResidual* residual) {
  const auto state = checked_residual(residual);
  check_idle(*state, "reset");
  state->values.reset();
}

void destroy_residual(dcResidual* residual) {
  const auto state = checked_residual(residual);
  check_idle(*state, "destroy");
  std::lock_guard<std::mutex> lock(g_residuals_mutex);
  g_residuals.erase(residual);
  delete residual;
}

std::shared_ptr<const CompressedCall> compressed_call(const OpArgs& args, const char* spec, dcResidual* residual,
                                                      dcCompressStats_t* stats) {
  if (!compressible(args.datatype, args.op))
    fail(dcInvalidArgument, std::string("DeepComm: compressed all-reduce takes float32, float16 or bfloat16 with "
                                        "sum or avg, not ") +
                                datatype_name(args.datatype) + " with " +
                                (args.op >= 0 && args.op < dcNumOps ? redop_name(args.op) : "a user op"));
  if (!spec) fail(dcInvalidArgument, "DeepComm: compression spec is NULL");
  auto call = std::make_shared<CompressedCall>();
  call->spec = compression::parse_spec(spec);
  call->spec_hash = spec_hash(call->spec);
  call->stats = stats;
  if (call->spec.error_feedback && !residual)
    fail(dcInvalidArgument, "DeepComm: compression spec '" + call->spec.to_string() +
                                "' has error feedback (ef): pass a residual from dcResidualCreate");
  if (!call->spec.error_feedback && residual)
    fail(dcInvalidArgument, "DeepComm: compression spec '" + call->spec.to_string() +
                                "' has no error feedback (ef): pass a NULL residual");
  if (residual) {
    call->residual = checked_residual(residual);
    if (call->residual->values.count() != args.count)
      fail(dcInvalidArgument, "DeepComm: the residual holds " + std::to_string(call->residual->values.count()) +
                                  " elements, the call " + std::to_string(args.count));
  }
  return call;
}

const compression::Spec* configured_spec(const dcComm* comm, const OpArgs& args) {
  const Config& config = comm->config;
  if (!config.compress || args.collective != dcCollAllReduce || args.compressed || args.count == 0 ||
      args.count > kMessageElements || !compressible(args.datatype, args.op) ||
      args.count * datatype_size(args.datatype) < config.compress_min_bytes)
    return nullptr;
  return &*config.compress;
}

namespace {
thread_local const void* t_residual_key = nullptr;  // ResidualKeyScope's buffer
}  // namespace

ResidualKeyScope::ResidualKeyScope(const void* buffer) : outer_(t_residual_key) { t_residual_key = buffer; }
ResidualKeyScope::~ResidualKeyScope() { t_residual_key = outer_; }

OpArgs with_configured_compression(dcComm* comm, OpArgs args) {
  const compression::Spec* spec = configured_spec(comm, args);
  if (!spec) return args;
  const Config& config = comm->config;
  auto call = std::make_shared<CompressedCall>();
  call->spec = *spec;
  call->spec_hash = spec_hash(call->spec);
  if (call->spec.error_feedback) {
    ExecComm& exec = comm->exec;
    if (!exec.residual_store) exec.residual_store = std::make_unique<ResidualStore>(config.compress_ef_bytes);
    if (auto generation = config::text(settings::kCompressReset)) exec.residual_store->reset_on_change(*generation);
    const void* key = t_residual_key ? t_residual_key : args.sendbuf;
    call->residual = exec.residual_store->find_or_create(key, args.count, args.datatype);
  }
  args.compressed = std::move(call);
  return args;
}

}  // namespace dc
