// The native C API (deepcomm.h). Every function converts internal failures into a dcResult_t and a
// per-thread message; no exception crosses this boundary.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "base/c_abi_guard.h"
#include "base/shareable_memory.h"
#include "deepcomm/deepcomm.h"
#include "kernels/reduce.h"
#include "src/core/bootstrap.h"
#include "src/core/communicator.h"
#include "src/core/compressed_issue.h"
#include "src/core/issue.h"
#include "src/core/one_sided.h"
#include "src/core/registration.h"
#include "src/core/suspend.h"
#include "src/core/window_peers.h"
#include "src/exec/comm_failure.h"
#include "src/exec/engine_call.h"
#include "src/exec/residual_store.h"

#define DC_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// Every entry point's body runs under the C-ABI guard.
template <class F>
dcResult_t guarded(F&& body) noexcept {
  return dc::guard_c_abi<dcResult_t>(std::forward<F>(body));
}

template <class T>
void require(T* p, const char* what) {
  if (!p) dc::fail(dcInvalidArgument, std::string("DeepComm: ") + what + " is NULL");
}

dcResult_t run(dcCollective_t coll, const void* sendbuf, void* recvbuf, size_t count, dcDataType_t dt, dcRedOp_t op,
               int root, dcComm_t comm, dcRequest_t* request) {
  dcResult_t state = dcSuccess;
  dcResult_t result = guarded([&] {
    dc::CommUse use(comm);  // an abort on another thread waits until this call is out
    dc::OpArgs a;
    a.collective = coll;
    a.sendbuf = sendbuf;
    a.recvbuf = recvbuf;
    a.count = count;
    a.datatype = dt;
    a.op = op;
    a.root = root;
    state = dc::issue(comm, a, request);
  });
  return result == dcSuccess ? state : result;
}

// A nonblocking communicator's set-up continues in the background: the call says dcInProgress and
// dcCommGetAsyncError tells when it is done.
dcResult_t in_progress_if_nonblocking(dcResult_t result, dcComm_t comm) {
  return result == dcSuccess && comm && !comm->config.blocking ? dcInProgress : result;
}

}  // namespace

DC_EXPORT const char* dcGetErrorString(dcResult_t result) {
  switch (result) {
    case dcSuccess: return "no error";
    case dcUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case dcSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case dcInternalError: return "internal error - please report this issue to the DeepComm developers";
    case dcInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case dcInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case dcRemoteError: return "remote process exited or there was a network error";
    case dcInProgress: return "DeepComm operation in progress";
    default: return "unknown result code";
  }
}

DC_EXPORT const char* dcGetLastError(void) { return dc::last_error(); }

DC_EXPORT dcResult_t dcGetVersion(int* version) {
  return guarded([&] {
    require(version, "version");
    *version = DEEPCOMM_VERSION_MAJOR * 10000 + DEEPCOMM_VERSION_MINOR * 100 + DEEPCOMM_VERSION_PATCH;
  });
}

DC_EXPORT dcResult_t dcGetUniqueId(dcUniqueId* id) {
  return guarded([&] {
    require(id, "unique id");
    dc::make_unique_id(id);
  });
}

DC_EXPORT dcResult_t dcCommInitRank(dcComm_t* comm, int nranks, const dcUniqueId* id, int rank,
                                    const dcConfig_t* config) {
  dcResult_t result = guarded([&] {
    require(comm, "communicator pointer");
    require(id, "unique id");
    *comm = nullptr;
    *comm = dc::init_rank(nranks, *id, rank, config);
  });
  return in_progress_if_nonblocking(result, comm ? *comm : nullptr);
}

DC_EXPORT dcResult_t dcCommInitRankScalable(dcComm_t* comm, int nranks, int rank, int nids, const dcUniqueId* ids,
                                            const dcConfig_t* config) {
  dcResult_t result = guarded([&] {
    require(comm, "communicator pointer");
    require(ids, "unique id array");
    *comm = nullptr;
    // Checked before the array is read: nids larger than nranks would read past a caller's array.
    if (nids < 1 || nranks < 1 || nids > nranks)
      dc::fail(dcInvalidArgument, "DeepComm: nIds must be in [1, nranks] (got " + std::to_string(nids) + " for " +
                                      std::to_string(nranks) + " ranks)");
    *comm = dc::init_rank_scalable(nranks, rank, std::vector<dcUniqueId>(ids, ids + nids), config);
  });
  return in_progress_if_nonblocking(result, comm ? *comm : nullptr);
}

DC_EXPORT dcResult_t dcCommInitAll(dcComm_t* comms, int nranks) {
  return guarded([&] {
    require(comms, "communicator array");
    if (nranks < 1) dc::fail(dcInvalidArgument, "DeepComm: dcCommInitAll needs at least one rank");
    dcUniqueId id;
    dc::make_unique_id(&id);
    std::vector<dcResult_t> results(nranks, dcSuccess);
    std::vector<std::string> messages(nranks);
    for (int r = 0; r < nranks; ++r) comms[r] = nullptr;
    // Every rank's thread is made before any starts: if one cannot be, the others return at once
    // instead of waiting at the rendezvous for a rank that never comes.
    struct Gate {
      std::mutex mutex;
      std::condition_variable cv;
      bool open = false, cancelled = false;
    } gate;
    std::vector<std::thread> threads;
    std::string not_created;
    for (int r = 0; r < nranks && not_created.empty(); ++r) {
      try {
        threads.emplace_back([&, r] {
          {
            std::unique_lock<std::mutex> lock(gate.mutex);
            gate.cv.wait(lock, [&] { return gate.open; });
            if (gate.cancelled) return;
          }
          results[r] = dcCommInitRank(&comms[r], nranks, &id, r, nullptr);
          if (results[r] != dcSuccess) messages[r] = dcGetLastError();
        });
      } catch (const std::exception& e) {
        not_created = "DeepComm: dcCommInitAll cannot create the thread of rank " + std::to_string(r) + " of " +
                      std::to_string(nranks) + ": " + e.what();
      }
    }
    {
      std::lock_guard<std::mutex> lock(gate.mutex);
      gate.open = true;
      gate.cancelled = !not_created.empty();
    }
    gate.cv.notify_all();
    for (auto& t : threads) t.join();
    if (!not_created.empty()) dc::fail(dcSystemError, not_created);
    for (int r = 0; r < nranks; ++r) {
      if (results[r] == dcSuccess) continue;
      for (int k = 0; k < nranks; ++k)
        if (comms[k]) dc::destroy_comm(comms[k]), comms[k] = nullptr;
      throw dc::Error(results[r], messages[r]);
    }
  });
}

DC_EXPORT dcResult_t dcCommInitFromEnv(dcComm_t* comm, const dcConfig_t* config) {
  return guarded([&] {
    require(comm, "communicator pointer");
    *comm = nullptr;
    dc::LaunchInfo info = dc::launch_info_from_env(dc::Config::from_environment().bootstrap_timeout_ms);
    *comm = dc::init_rank(info.nranks, info.id, info.rank, config);
  });
}

DC_EXPORT dcResult_t dcCommSplit(dcComm_t comm, int color, int key, dcComm_t* newcomm, const dcConfig_t* config) {
  dcResult_t result = guarded([&] {
    require(newcomm, "new communicator pointer");
    *newcomm = nullptr;
    dc::CommUse use(comm);
    dc::require_not_suspended(use.get(), "split");
    *newcomm = dc::split_comm(use.get(), color, key, config);
  });
  return in_progress_if_nonblocking(result, newcomm ? *newcomm : nullptr);
}

DC_EXPORT dcResult_t dcCommFinalize(dcComm_t comm) {
  bool in_progress = false;
  dcResult_t result = guarded([&] {
    dc::CommUse use(comm);
    dc::Engine::Waiting waiting(dc::Engine::instance());
    std::unique_lock<std::mutex> lock(comm->exec.inflight_mutex);
    if (!comm->config.blocking) {  // the operations finish in the background
      in_progress = comm->exec.inflight > 0 || comm->initializing;
      return;
    }
    if (!comm->exec.inflight_cv.wait_for(lock, std::chrono::milliseconds(comm->config.timeout_ms),
                                         [comm] { return comm->exec.inflight == 0; }))
      dc::fail(dcSystemError, "DeepComm: finalize timed out waiting for pending operations");
  });
  return result == dcSuccess && in_progress ? dcInProgress : result;
}

DC_EXPORT dcResult_t dcCommDestroy(dcComm_t comm) {
  return guarded([&] { dc::destroy_comm(comm); });
}

DC_EXPORT dcResult_t dcCommAbort(dcComm_t comm) {
  return guarded([&] { dc::abort_comm(comm); });
}

DC_EXPORT dcResult_t dcCommRevoke(dcComm_t comm) {
  return guarded([&] {
    dc::CommUse use(comm);
    dc::fail_comm_from_caller(&use.get()->exec,
                              dc::Status::failure(dcInvalidUsage, "DeepComm: the communicator was revoked"));
  });
}

DC_EXPORT dcResult_t dcCommFailedRanks(dcComm_t comm, int* ranks, int capacity, int* count) {
  return guarded([&] {
    require(count, "count pointer");
    if (capacity < 0 || (capacity > 0 && !ranks)) dc::fail(dcInvalidArgument, "DeepComm: bad rank array");
    dc::CommUse use(comm);
    std::vector<int> gone = dc::call_on_engine([comm] { return dc::gone_peers(&comm->exec); },
                                               comm->config.connect_timeout_ms, "reading failed ranks");
    *count = static_cast<int>(gone.size());
    for (int i = 0; i < std::min(capacity, *count); ++i) ranks[i] = gone[i];
  });
}

DC_EXPORT dcResult_t dcCommShrink(dcComm_t comm, const int* exclude, int exclude_count, dcComm_t* newcomm,
                                  const dcConfig_t* config, int flags) {
  return guarded([&] {
    require(newcomm, "new communicator pointer");
    *newcomm = nullptr;
    if (exclude_count < 0 || (exclude_count > 0 && !exclude)) dc::fail(dcInvalidArgument, "DeepComm: bad exclude list");
    std::vector<int> excluded(exclude, exclude + exclude_count);
    dc::CommUse use(comm);
    dc::require_not_suspended(use.get(), "shrink");
    *newcomm = dc::shrink_comm(use.get(), excluded, config, flags);
  });
}

DC_EXPORT dcResult_t dcCommGrowId(dcComm_t comm, dcUniqueId* id) {
  return guarded([&] {
    require(id, "grow id pointer");
    dc::CommUse use(comm);
    dc::issue_grow_id(use.get(), id);
  });
}

DC_EXPORT dcResult_t dcCommGrow(dcComm_t comm, int nranks, const dcUniqueId* id, int rank, dcComm_t* newcomm,
                                const dcConfig_t* config) {
  dcResult_t result = guarded([&] {
    require(newcomm, "new communicator pointer");
    *newcomm = nullptr;
    if (comm == nullptr) {
      require(id, "grow id (a new rank passes the id it was given)");
      *newcomm = dc::join_grow(nranks, *id, rank, config);
      return;
    }
    if (rank != -1)
      dc::fail(dcInvalidArgument,
               "DeepComm: an existing rank grows with rank -1 (it keeps its number), not " + std::to_string(rank));
    dc::CommUse use(comm);
    *newcomm = dc::grow_comm(use.get(), nranks, id, config);
  });
  return in_progress_if_nonblocking(result, newcomm ? *newcomm : nullptr);
}

DC_EXPORT dcResult_t dcCommSuspend(dcComm_t comm) {
  return guarded([&] {
    dc::CommUse use(comm);
    dc::suspend_comm(use.get());
  });
}

DC_EXPORT dcResult_t dcCommResume(dcComm_t comm) {
  return guarded([&] {
    dc::CommUse use(comm);
    dc::resume_comm(use.get());
  });
}

DC_EXPORT dcResult_t dcCommMemory(dcComm_t comm, dcCommMemory_t* memory) {
  return guarded([&] {
    require(memory, "memory pointer");
    dc::CommUse use(comm);
    *memory = dc::comm_memory(use.get());
  });
}

DC_EXPORT dcResult_t dcCommCount(dcComm_t comm, int* count) {
  return guarded([&] {
    require(count, "count");
    *count = dc::CommUse(comm).get()->exec.nranks;
  });
}

DC_EXPORT dcResult_t dcCommRank(dcComm_t comm, int* rank) {
  return guarded([&] {
    require(rank, "rank");
    *rank = dc::CommUse(comm).get()->exec.rank;
  });
}

DC_EXPORT dcResult_t dcCommGetAsyncError(dcComm_t comm, dcResult_t* error) {
  return guarded([&] {
    require(error, "error pointer");
    dc::CommUse use(comm);
    *error = dc::async_state(use.get());
  });
}

DC_EXPORT dcResult_t dcCommGetCounters(dcComm_t comm, dcCounters_t* counters) {
  return guarded([&] {
    require(counters, "counters");
    dc::CommUse use(comm);
    *counters = dc::call_on_engine(
        [comm] {
          dcCounters_t c{};
          for (int r = 0; r < comm->exec.nranks; ++r) {
            if (r == comm->exec.rank) continue;  // the self connection moves no bytes between ranks
            dc::Connection* conn = comm->exec.peer(r);
            dc::TransportCounters t = conn->counters();
            if (std::strcmp(conn->transport_name(), "tcp") == 0) {
              c.tcpBytesSent += t.bytes_sent;
              c.tcpBytesReceived += t.bytes_received;
            } else if (std::strcmp(conn->transport_name(), "ucx") == 0) {
              c.ucxBytesSent += t.bytes_sent;
              c.ucxBytesReceived += t.bytes_received;
            } else {
              c.shmBytesSent += t.bytes_sent;
              c.shmBytesReceived += t.bytes_received;
              c.shmBytesStaged += t.bytes_received_staged;
              c.shmBytesFromRegistered += t.bytes_received_mapped;
            }
          }
          return c;
        },
        comm->config.timeout_ms, "reading counters");
  });
}

DC_EXPORT dcResult_t dcCommPlanJson(dcComm_t comm, dcCollective_t coll, size_t count, dcDataType_t dt, int root,
                                    char* buf, size_t* len) {
  return guarded([&] {
    require(len, "length pointer");
    dc::CommUse use(comm);
    if (coll < 0 || coll >= dcNumCollectives) dc::fail(dcInvalidArgument, "DeepComm: unknown collective");
    if (dt < 0 || dt >= dcNumTypes) dc::fail(dcInvalidArgument, "DeepComm: unknown datatype");
    dc::OpArgs args;
    args.collective = coll;
    args.count = count;
    args.datatype = dt;
    args.root = root;
    // What ncclAllReduce would run: DEEPCOMM_COMPRESS applies to a qualifying sum.
    if (const dc::compression::Spec* spec = dc::configured_spec(comm, args)) {
      auto call = std::make_shared<dc::CompressedCall>();
      call->spec = *spec;
      args.compressed = call;
    }
    std::string json = dc::plan_to_json(dc::make_plan(dc::plan_request(comm, args)));
    const size_t needed = json.size() + 1;
    const size_t room = *len;
    *len = needed;
    if (!buf || room < needed)
      dc::fail(dcInvalidArgument, "DeepComm: plan JSON needs " + std::to_string(needed) + " bytes");
    std::memcpy(buf, json.c_str(), needed);
  });
}

DC_EXPORT dcResult_t dcAllReduce(const void* s, void* r, size_t n, dcDataType_t dt, dcRedOp_t op, dcComm_t comm,
                                 dcRequest_t* req) {
  return run(dcCollAllReduce, s, r, n, dt, op, -1, comm, req);
}
DC_EXPORT dcResult_t dcBroadcast(const void* s, void* r, size_t n, dcDataType_t dt, int root, dcComm_t comm,
                                 dcRequest_t* req) {
  return run(dcCollBroadcast, s, r, n, dt, dcSum, root, comm, req);
}
DC_EXPORT dcResult_t dcReduce(const void* s, void* r, size_t n, dcDataType_t dt, dcRedOp_t op, int root, dcComm_t comm,
                              dcRequest_t* req) {
  return run(dcCollReduce, s, r, n, dt, op, root, comm, req);
}
DC_EXPORT dcResult_t dcAllGather(const void* s, void* r, size_t n, dcDataType_t dt, dcComm_t comm, dcRequest_t* req) {
  return run(dcCollAllGather, s, r, n, dt, dcSum, -1, comm, req);
}
DC_EXPORT dcResult_t dcReduceScatter(const void* s, void* r, size_t n, dcDataType_t dt, dcRedOp_t op, dcComm_t comm,
                                     dcRequest_t* req) {
  return run(dcCollReduceScatter, s, r, n, dt, op, -1, comm, req);
}
DC_EXPORT dcResult_t dcAlltoAll(const void* s, void* r, size_t n, dcDataType_t dt, dcComm_t comm, dcRequest_t* req) {
  return run(dcCollAlltoAll, s, r, n, dt, dcSum, -1, comm, req);
}
DC_EXPORT dcResult_t dcGather(const void* s, void* r, size_t n, dcDataType_t dt, int root, dcComm_t comm,
                              dcRequest_t* req) {
  return run(dcCollGather, s, r, n, dt, dcSum, root, comm, req);
}
DC_EXPORT dcResult_t dcScatter(const void* s, void* r, size_t n, dcDataType_t dt, int root, dcComm_t comm,
                               dcRequest_t* req) {
  return run(dcCollScatter, s, r, n, dt, dcSum, root, comm, req);
}
DC_EXPORT dcResult_t dcSend(const void* s, size_t n, dcDataType_t dt, int peer, dcComm_t comm, dcRequest_t* req) {
  return run(dcCollSend, s, nullptr, n, dt, dcSum, peer, comm, req);
}
DC_EXPORT dcResult_t dcRecv(void* r, size_t n, dcDataType_t dt, int peer, dcComm_t comm, dcRequest_t* req) {
  return run(dcCollRecv, nullptr, r, n, dt, dcSum, peer, comm, req);
}

DC_EXPORT dcResult_t dcResidualCreate(dcResidual_t* residual, size_t count) {
  return guarded([&] {
    require(residual, "residual pointer");
    *residual = nullptr;
    *residual = dc::create_residual(count);
  });
}

DC_EXPORT dcResult_t dcResidualReset(dcResidual_t residual) {
  return guarded([&] { dc::reset_residual(residual); });
}

DC_EXPORT dcResult_t dcResidualDestroy(dcResidual_t residual) {
  return guarded([&] { dc::destroy_residual(residual); });
}

DC_EXPORT dcResult_t dcCompressedAllReduce(const void* s, void* r, size_t n, dcDataType_t dt, dcRedOp_t op,
                                           const char* spec, dcResidual_t residual, dcComm_t comm, dcRequest_t* req,
                                           dcCompressStats_t* stats) {
  dcResult_t state = dcSuccess;
  dcResult_t result = guarded([&] {
    dc::OpArgs a;
    a.collective = dcCollAllReduce;
    a.sendbuf = s;
    a.recvbuf = r;
    a.count = n;
    a.datatype = dt;
    a.op = op;
    dc::validate(comm, a);
    a.compressed = dc::compressed_call(a, spec, residual, stats);
    state = dc::issue(comm, a, req);
  });
  return result == dcSuccess ? state : result;
}

DC_EXPORT dcResult_t dcCommResetCompression(dcComm_t comm) {
  return guarded([&] {
    dc::checked_comm(comm);
    if (comm->exec.residual_store) comm->exec.residual_store->reset();
  });
}

DC_EXPORT dcResult_t dcGroupStart(void) {
  return guarded([] { dc::group_start(); });
}
DC_EXPORT dcResult_t dcGroupEnd(void) {
  dcResult_t state = dcSuccess;
  dcResult_t result = guarded([&] { state = dc::group_end(); });
  return result == dcSuccess ? state : result;
}

DC_EXPORT dcResult_t dcGroupSimulateEnd(double* seconds) {
  return guarded([&] {
    require(seconds, "seconds pointer");
    *seconds = dc::group_simulate_end();
  });
}

DC_EXPORT dcResult_t dcTest(dcRequest_t request, int* done) {
  return guarded([&] {
    require(request, "request");
    require(done, "done flag");
    *done = 0;
    *done = dc::test_request(request) ? 1 : 0;
  });
}

DC_EXPORT dcResult_t dcWait(dcRequest_t request) {
  return guarded([&] {
    require(request, "request");
    dc::wait_request(request);
  });
}

DC_EXPORT dcResult_t dcRedOpCreatePreMulSum(dcRedOp_t* op, const void* scalar, dcDataType_t dt, dcComm_t comm) {
  return guarded([&] {
    require(op, "op pointer");
    require(scalar, "scalar");
    dc::CommUse use(comm);
    const size_t elem = dc::datatype_size(dt);
    if (dt < 0 || dt >= dcNumTypes || elem == 0) dc::fail(dcInvalidArgument, "DeepComm: unknown datatype");
    size_t slot = 0;
    while (slot < comm->premul_ops.size() && comm->premul_ops[slot].in_use) ++slot;
    if (slot == comm->premul_ops.size()) comm->premul_ops.emplace_back();
    dc::PreMulSumOp& pm = comm->premul_ops[slot];
    pm.in_use = true;
    pm.datatype = dt;
    std::memcpy(pm.scalar, scalar, elem);
    *op = static_cast<dcRedOp_t>(dcNumOps + slot);
  });
}

DC_EXPORT dcResult_t dcRedOpDestroy(dcRedOp_t op, dcComm_t comm) {
  return guarded([&] {
    dc::CommUse use(comm);
    const size_t slot = static_cast<size_t>(op) - dcNumOps;
    if (op < dcNumOps || slot >= comm->premul_ops.size() || !comm->premul_ops[slot].in_use)
      dc::fail(dcInvalidArgument, "DeepComm: op was not created by dcRedOpCreatePreMulSum on this communicator");
    comm->premul_ops[slot].in_use = false;
  });
}

DC_EXPORT dcResult_t dcCommRegister(dcComm_t comm, void* buf, size_t size, void** handle) {
  return guarded([&] {
    require(handle, "handle pointer");
    dc::CommUse use(comm);
    *handle = dc::register_memory(use.get(), buf, size, false);
  });
}

DC_EXPORT dcResult_t dcCommDeregister(dcComm_t comm, void* handle) {
  return guarded([&] {
    dc::CommUse use(comm);
    dc::deregister_memory(use.get(), static_cast<dc::Registration*>(handle), false);
  });
}

DC_EXPORT dcResult_t dcCommWindowRegister(dcComm_t comm, void* buf, size_t size, dcWindow_t* win, int flags) {
  return guarded([&] {
    require(win, "window pointer");
    if (flags != 0 && flags != 1)
      dc::fail(dcInvalidArgument, "DeepComm: unknown window flags " + std::to_string(flags));
    dc::CommUse use(comm);
    dc::Registration* window = dc::register_memory(use.get(), buf, size, true);
    try {
      dc::share_window(use.get(), window);
    } catch (const dc::Error&) {
      dc::deregister_memory(use.get(), window, true);
      throw;
    }
    *win = reinterpret_cast<dcWindow_t>(window);
  });
}

DC_EXPORT dcResult_t dcCommWindowDeregister(dcComm_t comm, dcWindow_t win) {
  return guarded([&] {
    dc::CommUse use(comm);
    dc::deregister_memory(use.get(), reinterpret_cast<dc::Registration*>(win), true);
  });
}

DC_EXPORT dcResult_t dcPutSignal(const void* localbuf, size_t count, dcDataType_t datatype, int peer, dcWindow_t win,
                                 size_t byteOffset, int sigIdx, int ctx, dcComm_t comm) {
  return guarded([&] {
    dc::CommUse use(comm);
    dc::Registration* window = dc::checked_window(use.get(), win);
    dc::put_signal(use.get(), localbuf, count, datatype, peer, window, byteOffset, sigIdx, ctx);
  });
}

DC_EXPORT dcResult_t dcSignal(int peer, int sigIdx, int ctx, dcComm_t comm) {
  return guarded([&] {
    dc::CommUse use(comm);
    dc::signal_peer(use.get(), peer, sigIdx, ctx);
  });
}

DC_EXPORT dcResult_t dcWaitSignal(int nWaits, const dcSignalWait_t* waits, dcComm_t comm) {
  return guarded([&] {
    dc::CommUse use(comm);
    if (nWaits < 0)
      dc::fail(dcInvalidArgument, "DeepComm: dcWaitSignal: nWaits " + std::to_string(nWaits) + " is negative");
    if (nWaits > 0) require(waits, "waits");
    std::vector<dc::SignalWait> list;
    for (int i = 0; i < nWaits; ++i) list.push_back({waits[i].opCount, waits[i].peer, waits[i].sigIdx, waits[i].ctx});
    dc::wait_signals(use.get(), list);
  });
}

DC_EXPORT dcResult_t dcWindowPeerPointer(dcComm_t comm, dcWindow_t win, size_t byteOffset, int peer, void** ptr) {
  return guarded([&] {
    require(ptr, "pointer");
    dc::CommUse use(comm);
    *ptr = dc::window_address(use.get(), dc::checked_window(use.get(), win), byteOffset, peer);
  });
}

DC_EXPORT dcResult_t dcCommLoadStoreTeam(dcComm_t comm, int* first, int* size) {
  return guarded([&] {
    require(first, "first");
    require(size, "size");
    dc::CommUse use(comm);
    const dc::LoadStoreTeam team = dc::load_store_team(use.get());
    *first = team.first;
    *size = team.size;
  });
}

DC_EXPORT dcResult_t dcMemAlloc(void** ptr, size_t size) {
  return guarded([&] {
    require(ptr, "pointer");
    *ptr = dc::shareable_alloc(size);
  });
}

DC_EXPORT dcResult_t dcMemFree(void* ptr) {
  return guarded([&] {
    require(ptr, "pointer");
    dc::shareable_free(ptr);
  });
}
