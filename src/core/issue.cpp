#include "src/core/issue.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "kernels/reduce.h"
#include "src/core/compressed_issue.h"
#include "src/core/suspend.h"
#include "src/exec/comm_failure.h"
#include "src/exec/engine.h"
#include "src/exec/flat_board.h"
#include "src/exec/flat_collective.h"
#include "src/exec/signature.h"
#include "src/plan/cost_model.h"
#include "src/plan/plan.h"

namespace dc {

namespace {

struct PendingOp {
  dcComm* comm;
  OpArgs args;
  std::shared_ptr<const PreparedPlan> plan;  // null for a flat operation
  uint64_t seq;
  uint64_t signature = 0;  // collectives only (signature.h)
  bool flat = false;
  uint64_t flat_round = 0;
};

struct GroupState {
  int depth = 0;
  std::vector<PendingOp> ops;
  Status first_error;  // an error raised inside the group is reported again at dcGroupEnd
  // One-sided calls, run after the operations: puts and signals in call order, then the waits.
  std::vector<std::function<void()>> one_sided_sends, one_sided_waits;
};
thread_local GroupState t_group;

// Elements of the send and receive buffers this rank uses, from the API's count.
void buffer_elements(const OpArgs& a, int rank, int n, uint64_t* in, uint64_t* out) {
  const uint64_t c = a.count, cn = a.count * static_cast<uint64_t>(n);
  const bool root = rank == a.root;
  switch (a.collective) {
    case dcCollAllReduce:
      *in = c;
      *out = c;
      return;
    case dcCollBroadcast:
      *in = root ? c : 0;
      *out = c;
      return;
    case dcCollReduce:
      *in = c;
      *out = root ? c : 0;
      return;
    case dcCollAllGather:
      *in = c;
      *out = cn;
      return;
    case dcCollReduceScatter:
      *in = cn;
      *out = c;
      return;
    case dcCollAlltoAll:
      *in = cn;
      *out = cn;
      return;
    case dcCollGather:
      *in = c;
      *out = root ? cn : 0;
      return;
    case dcCollScatter:
      *in = root ? cn : 0;
      *out = c;
      return;
    case dcCollSend:
      *in = c;
      *out = 0;
      return;
    case dcCollRecv:
      *in = 0;
      *out = c;
      return;
    default:
      *in = 0;
      *out = 0;
      return;
  }
}

// NCCL's in-place forms: the send buffer sits inside the receive buffer where this rank's part goes.
// Gather and scatter alias only this rank's own block, which their out-of-place plans copy onto
// itself (a no-op), so they need no in-place plan.
bool is_in_place(const OpArgs& a, int rank, size_t elem) {
  auto send = reinterpret_cast<uintptr_t>(a.sendbuf), recv = reinterpret_cast<uintptr_t>(a.recvbuf);
  if (!a.sendbuf || !a.recvbuf) return false;
  switch (a.collective) {
    case dcCollAllGather: return send == recv + rank * a.count * elem;
    case dcCollReduceScatter: return recv == send + rank * a.count * elem;
    case dcCollGather:
    case dcCollScatter:
    case dcCollSend:
    case dcCollRecv: return false;
    default: return send == recv;
  }
}

}  // namespace

CommView plan_view(const dcComm* comm) {
  CommView view;
  view.rank = comm->exec.rank;
  view.nranks = comm->exec.nranks;
  view.cluster = comm->cluster;
  view.settings.algorithms = comm->config.algorithms;
  view.settings.chunk_bytes = comm->config.chunk_bytes;
  view.settings.tree_threshold_bytes = comm->config.tree_threshold_bytes;
  return view;
}

PlanRequest plan_request(const dcComm* comm, const OpArgs& args) {
  const size_t elem = datatype_size(args.datatype);
  const bool in_place = args.op < dcNumOps && is_in_place(args, comm->exec.rank, elem);
  return make_request(plan_view(comm), args.collective, args.count, elem, args.root, in_place,
                      args.compressed ? std::optional<compression::Spec>(args.compressed->spec) : std::nullopt);
}

namespace {

std::shared_ptr<const PreparedPlan> plan_for(dcComm* comm, const OpArgs& args) {
  return prepared_plan(comm, plan_request(comm, args));
}

// A pre-multiplied sum carries its scalar by value from here on.
OpArgs with_premul_scalar(const dcComm* comm, OpArgs args) {
  if (args.op >= dcNumOps) {
    const PreMulSumOp& pm = comm->premul_ops[args.op - dcNumOps];
    std::memcpy(args.premul_scalar, pm.scalar, sizeof args.premul_scalar);
  }
  return args;
}

PendingOp prepare(dcComm* comm, const OpArgs& asked) {
  validate(comm, asked);
  const OpArgs args = with_configured_compression(comm, asked);
  if (comm->initializing)
    fail(dcInvalidUsage,
         "DeepComm: the communicator is still being set up; poll dcCommGetAsyncError "
         "(ncclCommGetAsyncError) until it stops returning in-progress");
  if (comm->exec.async_error.load() != dcSuccess) {
    Status failure = comm->exec.error();
    throw Error(failure.code, failure.message);
  }
  const bool flat = flat_eligible(&comm->exec, args);
  PendingOp p{comm, with_premul_scalar(comm, args), flat ? nullptr : plan_for(comm, args), 0,
              operation_signature(args)};
  if (args.collective == dcCollSend) p.seq = comm->exec.next_send_seq[args.root]++;
  else if (args.collective == dcCollRecv) p.seq = comm->exec.next_recv_seq[args.root]++;
  else p.seq = comm->exec.next_collective_seq++;
  // On a board, every collective leaves its signature for flat operations to check against.
  if (comm->exec.board && p.signature) comm->exec.board->note_signature(comm->exec.rank, p.seq, p.signature);
  if (flat) {
    p.flat = true;
    p.flat_round = comm->exec.next_flat_round;
    comm->exec.next_flat_round += flat_rounds(&comm->exec, args);
  }
  return p;
}

// A flat operation counts as in flight (destroy and abort wait for it) from its post to its end.
void begin_flat(ExecComm* comm) {
  std::lock_guard<std::mutex> lock(comm->inflight_mutex);
  ++comm->inflight;
}

void end_flat(ExecComm* comm) {
  std::lock_guard<std::mutex> lock(comm->inflight_mutex);
  if (--comm->inflight == 0) comm->inflight_cv.notify_all();
}

// Issue order: a flat operation starts after the communicator's operations on the engine ended.
void wait_engine_idle(ExecComm* comm) {
  if (comm->wait_idle(comm->timeout_ms)) return;
  fail_comm_from_caller(comm, timeout_status(comm->timeout_ms));
  Status failure = comm->error();
  throw Error(failure.code, failure.message);
}

// Runs flat operations in waves of at most one per communicator: a wave posts all of its
// operations before it waits for any, so one thread can drive several ranks' communicators in a
// group. Throws the first error after every operation ended.
void run_flat(const std::vector<const PendingOp*>& ops) {
  Status first_error;
  std::vector<const PendingOp*> left = ops;
  while (!left.empty()) {
    std::vector<FlatOp> wave;
    std::vector<const PendingOp*> later;
    std::set<dcComm*> in_wave;
    for (const PendingOp* p : left) {
      if (!in_wave.insert(p->comm).second) {
        later.push_back(p);
        continue;
      }
      wave.push_back(FlatOp{&p->comm->exec, p->args, p->seq, p->signature, p->flat_round});
    }
    std::vector<ExecComm*> posted;
    for (const FlatOp& op : wave) {
      try {
        wait_engine_idle(op.comm);
        begin_flat(op.comm);
        posted.push_back(op.comm);
        flat_post(op);
      } catch (const Error& e) {
        if (first_error.ok()) first_error = Status::failure(e.code(), e.what());
      }
    }
    for (const FlatOp& op : wave) {
      if (std::find(posted.begin(), posted.end(), op.comm) == posted.end()) continue;
      try {
        flat_finish(op);
      } catch (const Error& e) {
        if (first_error.ok()) first_error = Status::failure(e.code(), e.what());
      }
      end_flat(op.comm);
    }
    left = std::move(later);
  }
  if (!first_error.ok()) throw Error(first_error.code, first_error.message);
}

// A nonblocking communicator's call: remembered for dcCommGetAsyncError instead of waited for.
void remember_pending(dcComm* comm, const std::shared_ptr<OpBatch>& batch) {
  std::lock_guard<std::mutex> lock(comm->pending_mutex);
  comm->pending.push_back(batch);
}

}  // namespace

Status timeout_status(int timeout_ms) {
  return Status::failure(dcSystemError, "DeepComm: an operation made no progress within DEEPCOMM_TIMEOUT (" +
                                            std::to_string(timeout_ms / 1000) +
                                            " s); a peer stalled or stopped calling");
}

void wait_batch(const std::shared_ptr<OpBatch>& batch, int timeout_ms, const std::vector<dcComm*>& comms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  if (!batch->wait_until(deadline)) {
    // Fail the communicators (and tell the other ranks): the operations end now, with this error.
    for (dcComm* c : comms) fail_comm_from_caller(&c->exec, timeout_status(timeout_ms));
    // Ending waits for transfers still reading or writing the buffers, bounded (Operation::complete).
    if (!batch->wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(5))) {
      fail(dcSystemError, "DeepComm: an operation did not end 5 s after DEEPCOMM_TIMEOUT (" +
                              std::to_string(timeout_ms / 1000) + " s) failed it; the communicator is unusable");
    }
  }
  Status st = batch->status();
  if (!st.ok()) throw Error(st.code, st.message);
}

void validate(dcComm* comm, const OpArgs& a) {
  checked_comm(comm);
  require_not_suspended(comm, "an operation");
  if (a.collective < 0 || a.collective >= dcNumCollectives) fail(dcInvalidArgument, "DeepComm: unknown collective");
  const size_t elem = datatype_size(a.datatype);
  if (a.datatype < 0 || a.datatype >= dcNumTypes || elem == 0)
    fail(dcInvalidArgument, "DeepComm: unknown datatype " + std::to_string(static_cast<int>(a.datatype)));
  if (is_reduction(a.collective)) {
    const bool builtin = a.op >= 0 && a.op < dcNumOps;
    const size_t custom = static_cast<size_t>(a.op) - dcNumOps;
    const bool premul =
        !builtin && a.op >= dcNumOps && custom < comm->premul_ops.size() && comm->premul_ops[custom].in_use;
    if (!builtin && !premul)
      fail(dcInvalidArgument, "DeepComm: unknown reduction op " + std::to_string(static_cast<int>(a.op)));
    if (premul && comm->premul_ops[custom].datatype != a.datatype)
      fail(dcInvalidArgument, "DeepComm: pre-multiplied sum op was created for another datatype");
  }
  if (is_rooted(a.collective) && (a.root < 0 || a.root >= comm->exec.nranks)) {
    const char* what = is_point_to_point(a.collective) ? "peer" : "root";
    fail(dcInvalidArgument, std::string("DeepComm: ") + what + " " + std::to_string(a.root) + " is out of range [0, " +
                                std::to_string(comm->exec.nranks) + ")");
  }
  const uint64_t n = static_cast<uint64_t>(comm->exec.nranks);
  const uint64_t limit = std::numeric_limits<uint64_t>::max() / 2;
  if (a.count > limit / n / elem)
    fail(dcInvalidArgument, "DeepComm: count " + std::to_string(a.count) + " of " + datatype_name(a.datatype) +
                                " overflows the byte size");
  uint64_t in = 0, out = 0;
  buffer_elements(a, comm->exec.rank, comm->exec.nranks, &in, &out);
  if (in && !a.sendbuf) fail(dcInvalidArgument, "DeepComm: send buffer is NULL with a nonzero count");
  if (out && !a.recvbuf) fail(dcInvalidArgument, "DeepComm: receive buffer is NULL with a nonzero count");
}

dcResult_t async_state(dcComm* comm) {
  if (comm->initializing) return dcInProgress;
  if (comm->exec.async_error.load() != dcSuccess) return static_cast<dcResult_t>(comm->exec.async_error.load());
  std::lock_guard<std::mutex> lock(comm->pending_mutex);
  auto& pending = comm->pending;
  pending.erase(std::remove_if(pending.begin(), pending.end(), [](const auto& b) { return b->done(); }), pending.end());
  return pending.empty() ? dcSuccess : dcInProgress;
}

dcResult_t issue(dcComm* comm, const OpArgs& args, dcRequest_t* request) {
  if (request && t_group.depth > 0)
    fail(dcInvalidUsage, "DeepComm: a request cannot be taken inside a group; use dcGroupEnd");
  if (t_group.depth > 0) {
    try {
      t_group.ops.push_back(prepare(comm, args));
    } catch (const Error& e) {
      if (t_group.first_error.ok()) t_group.first_error = Status::failure(e.code(), e.what());
      throw;
    }
    return dcSuccess;
  }
  PendingOp p = prepare(comm, args);
  if (p.flat) {
    // Complete on return, whatever the caller asked for: a request is handed back finished.
    run_flat({&p});
    if (request) {
      auto done = std::make_shared<OpBatch>(1);
      done->finish(Status::success());
      *request = new dcRequest{done, comm->config.timeout_ms};
    }
    return dcSuccess;
  }
  auto batch = std::make_shared<OpBatch>(1);
  submit(std::make_shared<Operation>(&p.comm->exec, p.args, p.plan, p.seq, batch));
  if (request) {
    *request = new dcRequest{batch, comm->config.timeout_ms};
    Engine::instance().work_left_running();
    return dcSuccess;
  }
  if (!comm->config.blocking) {
    remember_pending(comm, batch);
    Engine::instance().work_left_running();
    return dcInProgress;
  }
  wait_batch(batch, comm->config.timeout_ms, {comm});
  return dcSuccess;
}

int32_t agree_min(dcComm* comm, int32_t value) {
  int32_t result = value;
  OpArgs a;
  a.collective = dcCollAllReduce;
  a.sendbuf = &value;
  a.recvbuf = &result;
  a.count = 1;
  a.datatype = dcInt32;
  a.op = dcMin;
  auto batch = std::make_shared<OpBatch>(1);
  submit(std::make_shared<Operation>(&comm->exec, a, plan_for(comm, a), comm->exec.next_collective_seq++, batch));
  wait_batch(batch, comm->config.timeout_ms, {comm});
  return result;
}

void group_start() { ++t_group.depth; }

bool group_open() { return t_group.depth > 0; }

bool queued_in_group(const dcComm* comm) {
  return std::any_of(t_group.ops.begin(), t_group.ops.end(), [comm](const PendingOp& p) { return p.comm == comm; });
}

namespace {

// The operations of an ended group: submitted together, flat ones on this thread.
dcResult_t run_group(std::vector<PendingOp> ops, Status first_error) {
  // Operations accepted inside the group run even when another call in it was refused: the other
  // ranks run theirs, and sequence numbers were taken. The refusal is reported after them.
  if (ops.empty()) {
    if (!first_error.ok()) throw Error(first_error.code, first_error.message);
    return dcSuccess;
  }
  // The engine's operations start first and flat ones run after them on this thread (see README:
  // a group's operations must not depend on one another's results).
  std::vector<const PendingOp*> flat;
  for (const auto& p : ops)
    if (p.flat) flat.push_back(&p);
  const int on_engine = static_cast<int>(ops.size() - flat.size());
  auto batch = std::make_shared<OpBatch>(on_engine);
  std::vector<dcComm*> comms;
  int timeout_ms = 0;
  bool nonblocking = false;
  for (auto& p : ops) {
    if (p.flat) continue;
    submit(std::make_shared<Operation>(&p.comm->exec, p.args, p.plan, p.seq, batch));
    comms.push_back(p.comm);
    timeout_ms = std::max(timeout_ms, p.comm->config.timeout_ms);
    nonblocking = nonblocking || !p.comm->config.blocking;
  }
  try {
    run_flat(flat);
  } catch (const Error& e) {
    if (first_error.ok()) first_error = Status::failure(e.code(), e.what());
  }
  if (!first_error.ok()) throw Error(first_error.code, first_error.message);
  if (on_engine == 0) return dcSuccess;
  if (nonblocking) {
    for (dcComm* c : comms) remember_pending(c, batch);
    Engine::instance().work_left_running();
    return dcInProgress;
  }
  wait_batch(batch, timeout_ms, comms);
  return dcSuccess;
}

}  // namespace

bool defer_one_sided(std::function<void()> call, bool wait) {
  if (t_group.depth == 0) return false;
  (wait ? t_group.one_sided_waits : t_group.one_sided_sends).push_back(std::move(call));
  return true;
}

dcResult_t group_end() {
  if (t_group.depth == 0) fail(dcInvalidUsage, "DeepComm: group end without a matching group start");
  if (--t_group.depth > 0) return dcSuccess;
  GroupState group = std::move(t_group);
  t_group = GroupState{};
  Status first_error;
  dcResult_t state = dcSuccess;
  try {
    state = run_group(std::move(group.ops), group.first_error);
  } catch (const Error& e) {
    first_error = Status::failure(e.code(), e.what());
  }
  // One-sided calls cannot deadlock with the operations: they need nothing from the peers' calls.
  for (auto* calls : {&group.one_sided_sends, &group.one_sided_waits}) {
    for (const auto& call : *calls) {
      try {
        call();
      } catch (const Error& e) {
        if (first_error.ok()) first_error = Status::failure(e.code(), e.what());
      }
    }
  }
  if (!first_error.ok()) throw Error(first_error.code, first_error.message);
  return state;
}

double group_simulate_end() {
  if (t_group.depth != 1)
    fail(dcInvalidUsage,
         "DeepComm: group simulation must end the outermost group (depth " + std::to_string(t_group.depth) + ")");
  std::vector<PendingOp> ops = std::move(t_group.ops);
  t_group = GroupState{};
  std::map<dcComm*, double> per_comm;
  for (const auto& p : ops) {
    // A flat operation is priced by the plan it would otherwise run (an upper bound).
    const auto plan = p.plan ? p.plan : plan_for(p.comm, p.args);
    per_comm[p.comm] += plan_time_seconds(plan->plan, plan_request(p.comm, p.args));
  }
  double longest = 0;
  for (const auto& [comm, seconds] : per_comm) longest = std::max(longest, seconds);
  return longest;
}

void wait_request(dcRequest* request) {
  std::unique_ptr<dcRequest> owned(request);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(request->timeout_ms);
  if (!request->batch->wait_until(deadline)) {
    owned.release();  // still pending: the caller may wait again
    fail(dcSystemError, "DeepComm: request did not complete within DEEPCOMM_TIMEOUT");
  }
  Status st = request->batch->status();
  if (!st.ok()) throw Error(st.code, st.message);
}

bool test_request(dcRequest* request) {
  if (!request->batch->done()) return false;
  wait_request(request);
  return true;
}

}  // namespace dc
