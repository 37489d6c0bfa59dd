// The executor: one Operation runs one rank's plan of one collective or point-to-point call on the
// progress engine. Steps start when their dependencies completed; transfers go to the peer's
// connection with tag (communicator id, operation sequence, step tag); every local step (copy,
// reduce, pre-multiply, finalize, and the codec steps of compressed plans, compressed_steps.cpp)
// goes to the device queue (device/device_queue.h), which ends element steps where they are posted
// and runs codec steps on its workers. Every algorithm is a plan; there is no other path.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "base/error.h"
#include "deepcomm/deepcomm.h"
#include "device/device_queue.h"
#include "src/exec/compressed_call.h"
#include "src/exec/exec_comm.h"
#include "src/exec/prepared_plan.h"

namespace dc {

struct OpArgs {
  dcCollective_t collective = dcCollAllReduce;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  size_t count = 0;
  dcDataType_t datatype = dcFloat32;
  dcRedOp_t op = dcSum;
  int root = -1;  // root, or peer for send/recv
  // A pre-multiplied sum (op >= dcNumOps): the scalar, captured when the operation is issued so that
  // destroying the op afterwards cannot pull it from under a queued operation.
  uint8_t premul_scalar[8] = {};
  // A compressed all-reduce: its spec, error-feedback state and statistics.
  std::shared_ptr<const CompressedCall> compressed;
};

// Completion of a set of operations (one call, one group, or one request), shared by the waiting
// thread and the engine.
class OpBatch {
 public:
  explicit OpBatch(int operations) : outstanding_(operations), finished_(operations == 0) {}
  void finish(const Status& status);
  bool done();
  // Waits until every operation finished or the deadline passed, running the engine's handlers
  // meanwhile when it can (Engine::drive_until); returns false on timeout.
  bool wait_until(std::chrono::steady_clock::time_point deadline);
  Status status();

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int outstanding_;
  std::atomic<bool> finished_;  // outstanding_ reached 0 (read by a driving waiter)
  Status status_;
};

class Operation : public std::enable_shared_from_this<Operation> {
 public:
  // seq: the collective's sequence number, or the point-to-point sequence with the peer.
  Operation(ExecComm* comm, const OpArgs& args, std::shared_ptr<const PreparedPlan> plan, uint64_t seq,
            std::shared_ptr<OpBatch> batch);

  bool is_collective() const;
  ExecComm* comm() const { return comm_; }
  // Engine thread only.
  void start();
  // Ends the operation with status unless it already ended (communicator failure).
  void fail(const Status& status);
  // Whether a transfer with this comm rank is still to come (or the operation has not started).
  bool waits_on(int peer) const;
  uint64_t sequence() const { return seq_; }
  dcCollective_t collective() const { return args_.collective; }
  uint64_t signature() const { return signature_; }

 private:
  void drain();
  void run_step(uint32_t index);
  void step_finished(uint32_t index, const Status& status);
  void complete(const Status& status);
  // Gives the buffers back (queue, batch, in-flight count) once no local step, send or receive still
  // uses them.
  void release();
  bool buffers_in_use() const { return local_steps_ > 0 || sends_in_flight_ > 0 || !receiving_from_.empty(); }
  // Releases an ended operation once the last local step, send or receive using its buffers ended.
  void release_if_unused() {
    if (completed_ && !buffers_in_use()) release();
  }
  // Every transfer goes through these: the operation keeps its buffers until the transport let go of
  // them (a cancelled receive ends only once the payload piece being written into its buffer landed).
  void post_send(int peer, const Tag& tag, const void* buf, size_t len, std::function<void(const Status&)> then);
  void post_recv(int peer, const Tag& tag, void* buf, size_t capacity, PieceSink sink, Completion then);
  void send_ended();
  void receive_ended(int peer);
  // After a failure: waits a bounded time for transfers still in flight, then releases anyway. A send
  // may stay announced (a peer that failed before posting a receive never takes it); a receive still
  // landing (its sender stalled mid-message) has its connection closed first, so nothing arriving
  // later is written into a buffer the caller got back.
  void bound_transfer_drain();
  // Compressed plans (compressed_steps.cpp): message transfers and codec jobs.
  void run_message_step(uint32_t index);
  void run_encode(uint32_t index);
  void run_decode(uint32_t index);
  void run_recv_decode(uint32_t index);
  // Posts plan step index's local work to the device queue; the step finishes when it ended (at
  // once, or when its completion comes back to the engine).
  void run_local(uint32_t index, const device::LocalStep& step);
  static void local_step_completed(void* operation, uint64_t index, const Status& status);
  // A local step the device queue accepted (it ends later): the operation keeps itself alive until
  // the last one ended, since a failed operation may release its buffers before (bounded drain).
  void local_step_accepted();
  void local_step_ended(uint32_t index, const Status& status);
  // An element step that must end at once (device::DeviceQueue::element_steps_end_at_post).
  Status run_element_now(const device::LocalStep& step);
  // A codec step ended well: its outputs go to the operation (compressed_steps.cpp).
  void take_codec_output(uint32_t index);
  void write_stats();
  Status explained(const Status& status, int peer) const;
  void exchange_signatures();
  // After a failure: the transports drop this operation's receives and its sends not yet on the wire.
  void cancel_transfers();
  void side_step_finished(const Status& status, int peer, bool* done_flag);
  Tag tag_of(const Step& step) const;
  std::byte* address(const BufRef& ref) const;

  ExecComm* comm_;
  OpArgs args_;
  std::shared_ptr<const PreparedPlan> prepared_;
  uint64_t seq_;
  std::shared_ptr<OpBatch> batch_;
  size_t elem_size_;
  dcRedOp_t reduce_op_;          // built-in op used by the kernels (pre-multiplied sum reduces as sum)
  uint64_t signature_;           // carried in every tag (0 for point-to-point)
  uint64_t peer_signature_ = 0;  // received from the next rank in the signature exchange
  bool signature_sent_ = false, signature_received_ = false;
  std::byte* input_ = nullptr;
  std::byte* output_ = nullptr;
  std::byte* scratch_ = nullptr;
  std::byte* bytes_ = nullptr;            // compressed messages (BufId::Bytes)
  float* residual_ = nullptr;             // error feedback (BufId::Residual)
  std::vector<uint64_t> lengths_;         // run-time message lengths, by slot
  device::DeviceQueue* queue_ = nullptr;  // the process's (local_queue()), taken at start
  int local_steps_ = 0;                   // local steps the device queue has not ended; release waits for them
  std::shared_ptr<Operation> alive_while_local_steps_;  // this, while local_steps_ > 0
  // What codec steps write until they end (the device queue owns nothing of the operation's).
  struct CodecOutput {
    compression::EncodeResult encode;
    device::DecodeTimes times;
  };
  std::map<uint32_t, CodecOutput> codec_outputs_;  // by step
  int sends_in_flight_ = 0;                        // sends the transport has not ended; release waits for them
  std::map<int, int> receiving_from_;              // receives the transport has not ended, per peer; likewise
  Status final_status_;
  dcCompressStats_t stats_{};
  std::chrono::steady_clock::time_point started_;

  std::vector<uint32_t> waiting_on_;  // unfinished dependencies per step
  std::vector<uint8_t> finished_;     // per step
  std::vector<uint32_t> ready_;
  size_t steps_left_ = 0;
  bool draining_ = false;
  bool completed_ = false;
  bool released_ = false;
};

// Queues an operation on the engine: collectives of one communicator run one after another in issue
// order; point-to-point operations start at once (they are matched by per-peer sequence numbers).
void submit(std::shared_ptr<Operation> op);

// Scratch memory of one communicator, reused across its (sequential) collectives. Engine thread.
std::byte* comm_scratch(ExecComm* comm, size_t bytes, int slot);

}  // namespace dc
