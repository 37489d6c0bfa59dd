#include "src/core/stream_bridge.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>

#include "base/config_table.h"
#include "base/log.h"
#include "base/wake_slice.h"
#include "compression/gpu/emulated_encoder.h"
#include "kernels/reduce.h"
#include "src/core/compressed_issue.h"
#include "src/core/settings.h"

namespace dc {

namespace {

using Clock = std::chrono::steady_clock;

// How long a destroyed bridge waits for its streams to leave the slots, after opening every gate.
constexpr std::chrono::seconds kRetireGrace{5};
constexpr size_t kSlotAlignment = 64;
// Pinned blocks a bridge keeps for later calls once their operations retired.
constexpr size_t kCachedPinnedBytes = size_t{256} << 20;

size_t aligned(size_t bytes) { return (bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment; }

uint64_t load(const uint64_t& word) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(word)).load(std::memory_order_acquire);
}

}  // namespace

StreamBridge::StreamBridge(dcComm_t comm, device::StreamQueue& streams)
    : comm_(comm),
      streams_(streams),
      pool_(streams, kCachedPinnedBytes),
      captured_(std::make_shared<CapturedList>(streams)),
      residuals_(streams, comm->config.compress_ef_bytes) {
  if (dcCommCount(comm, &nranks_) != dcSuccess || dcCommRank(comm, &rank_) != dcSuccess)
    dc::fail(dcInvalidArgument, std::string("DeepComm: stream bridge: ") + dcGetLastError());
  gate_word_ = static_cast<uint64_t*>(streams_.alloc_pinned(sizeof(uint64_t)));
  if (gate_word_ == nullptr) {
    dc::fail(dcSystemError, "DeepComm: stream bridge: cannot allocate its pinned gate word");
  }
  *gate_word_ = 0;
  issuer_ = std::thread(&StreamBridge::issue_loop, this);
}

StreamBridge::~StreamBridge() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  captured_->wake_event().ring();
  issuer_.join();
  // Graphs that live on, and streams that never retired their operations, still ring the doorbells'
  // eventfd: the keeper holds it open (and serves the graphs' replays).
  if (!ops_.empty() || captured_->size() > 0) keep_after_bridge(captured_, !ops_.empty());
  // Such streams may still read the gate word and write the descriptor: they stay, rather than be
  // reused under them.
  if (!ops_.empty()) {
    DC_WARN(
        "stream bridge destroyed while %zu device operations had not left their streams: their pinned memory "
        "is left allocated",
        ops_.size());
    return;
  }
  streams_.free_pinned(gate_word_);
  residuals_.release();
  for (auto& [stream, workspace] : workspaces_) workspace.release(streams_);
}

dcResult_t StreamBridge::all_reduce(const void* send, void* recv, size_t count, dcDataType_t type, dcRedOp_t op,
                                    device::Stream stream) {
  const size_t bytes = bytes_of(count, 1, type);
  if (bytes == kBadSize) return refuse(dcInvalidArgument, "DeepComm: device all-reduce: bad count or datatype");
  Status status;
  if (auto compressed = device_compressed(send, recv, count, type, op, stream, &status)) {
    Part part{.stream = stream,
              .send = send,
              .recv = recv,
              .slot_out_bytes = compressed->slot_bytes(),
              .run = [this, compressed](const void*,
                                        void* out) { return compressed->exchange(comm_, static_cast<uint8_t*>(out)); },
              .compressed = compressed};
    std::vector<Part> parts;
    parts.push_back(std::move(part));
    return enqueue(std::move(parts));
  }
  if (!status.ok()) return refuse(status.code, status.message);
  return add(stream, send, bytes, recv, bytes,
             [=, this](const void* in, void* out) { return dcAllReduce(in, out, count, type, op, comm_, nullptr); });
}

dcResult_t StreamBridge::broadcast(const void* send, void* recv, size_t count, dcDataType_t type, int root,
                                   device::Stream stream) {
  const size_t bytes = bytes_of(count, 1, type);
  if (bytes == kBadSize || root < 0 || root >= nranks_)
    return refuse(dcInvalidArgument, "DeepComm: device broadcast: bad count, datatype or root");
  const bool sends = rank_ == root;
  return add(stream, send, sends ? bytes : 0, recv, bytes, [=, this](const void* in, void* out) {
    return dcBroadcast(sends ? in : out, out, count, type, root, comm_, nullptr);
  });
}

dcResult_t StreamBridge::reduce(const void* send, void* recv, size_t count, dcDataType_t type, dcRedOp_t op, int root,
                                device::Stream stream) {
  const size_t bytes = bytes_of(count, 1, type);
  if (bytes == kBadSize || root < 0 || root >= nranks_)
    return refuse(dcInvalidArgument, "DeepComm: device reduce: bad count, datatype or root");
  // Every rank gets an output slot (the engine may use it); only the root's is copied out.
  return add(
      stream, send, bytes, recv, bytes,
      [=, this](const void* in, void* out) { return dcReduce(in, out, count, type, op, root, comm_, nullptr); },
      rank_ == root);
}

dcResult_t StreamBridge::all_gather(const void* send, void* recv, size_t send_count, dcDataType_t type,
                                    device::Stream stream) {
  const size_t in = bytes_of(send_count, 1, type), out = bytes_of(send_count, nranks_, type);
  if (out == kBadSize) return refuse(dcInvalidArgument, "DeepComm: device all-gather: bad count or datatype");
  return add(stream, send, in, recv, out,
             [=, this](const void* from, void* to) { return dcAllGather(from, to, send_count, type, comm_, nullptr); });
}

dcResult_t StreamBridge::reduce_scatter(const void* send, void* recv, size_t recv_count, dcDataType_t type,
                                        dcRedOp_t op, device::Stream stream) {
  const size_t in = bytes_of(recv_count, nranks_, type), out = bytes_of(recv_count, 1, type);
  if (in == kBadSize) return refuse(dcInvalidArgument, "DeepComm: device reduce-scatter: bad count or datatype");
  return add(stream, send, in, recv, out, [=, this](const void* from, void* to) {
    return dcReduceScatter(from, to, recv_count, type, op, comm_, nullptr);
  });
}

dcResult_t StreamBridge::all_to_all(const void* send, void* recv, size_t count, dcDataType_t type,
                                    device::Stream stream) {
  const size_t bytes = bytes_of(count, nranks_, type);
  if (bytes == kBadSize) return refuse(dcInvalidArgument, "DeepComm: device all-to-all: bad count or datatype");
  return add(stream, send, bytes, recv, bytes,
             [=, this](const void* from, void* to) { return dcAlltoAll(from, to, count, type, comm_, nullptr); });
}

dcResult_t StreamBridge::gather(const void* send, void* recv, size_t count, dcDataType_t type, int root,
                                device::Stream stream) {
  const size_t in = bytes_of(count, 1, type), out = bytes_of(count, nranks_, type);
  if (out == kBadSize || root < 0 || root >= nranks_)
    return refuse(dcInvalidArgument, "DeepComm: device gather: bad count, datatype or root");
  return add(
      stream, send, in, recv, out,
      [=, this](const void* from, void* to) { return dcGather(from, to, count, type, root, comm_, nullptr); },
      rank_ == root);
}

dcResult_t StreamBridge::scatter(const void* send, void* recv, size_t count, dcDataType_t type, int root,
                                 device::Stream stream) {
  const size_t in = bytes_of(count, nranks_, type), out = bytes_of(count, 1, type);
  if (in == kBadSize || root < 0 || root >= nranks_)
    return refuse(dcInvalidArgument, "DeepComm: device scatter: bad count, datatype or root");
  const bool sends = rank_ == root;
  return add(stream, send, sends ? in : 0, recv, out, [=, this](const void* from, void* to) {
    return dcScatter(sends ? from : nullptr, to, count, type, root, comm_, nullptr);
  });
}

dcResult_t StreamBridge::send(const void* buffer, size_t count, dcDataType_t type, int peer, device::Stream stream) {
  const size_t bytes = bytes_of(count, 1, type);
  if (bytes == kBadSize || peer < 0 || peer >= nranks_)
    return refuse(dcInvalidArgument, "DeepComm: device send: bad count, datatype or peer");
  return add(stream, buffer, bytes, nullptr, 0,
             [=, this](const void* in, void*) { return dcSend(in, count, type, peer, comm_, nullptr); });
}

dcResult_t StreamBridge::recv(void* buffer, size_t count, dcDataType_t type, int peer, device::Stream stream) {
  const size_t bytes = bytes_of(count, 1, type);
  if (bytes == kBadSize || peer < 0 || peer >= nranks_)
    return refuse(dcInvalidArgument, "DeepComm: device receive: bad count, datatype or peer");
  return add(stream, nullptr, 0, buffer, bytes,
             [=, this](const void*, void* out) { return dcRecv(out, count, type, peer, comm_, nullptr); });
}

Status StreamBridge::async_error() {
  std::lock_guard<std::mutex> lock(mutex_);
  collect_decode_faults();  // a stream that passed its decodes shows their refusal at once
  return error_;
}

std::shared_ptr<DeviceCompressedCall> StreamBridge::device_compressed(const void* send, void* recv, size_t count,
                                                                      dcDataType_t type, dcRedOp_t op,
                                                                      device::Stream stream, Status* status) {
  if (grouping_ || (op != dcSum && op != dcAvg) || streams_.capturing(stream)) return nullptr;
  OpArgs args;
  args.sendbuf = send;
  args.recvbuf = recv;
  args.count = count;
  args.datatype = type;
  args.op = op;
  const compression::Spec* spec = configured_spec(comm_, args);
  if (!spec || !compression::gpu::device_encodes(*spec)) return nullptr;
  float* residual = nullptr;
  if (spec->error_feedback) {
    residual = device_residual(send, count, type, stream, status);
    if (!status->ok()) return nullptr;
  }
  return std::make_shared<DeviceCompressedCall>(streams_, *spec, count, type, op, rank_, nranks_, residual,
                                                workspaces_[stream.handle]);
}

float* StreamBridge::device_residual(const void* buffer, size_t count, dcDataType_t type, device::Stream stream,
                                     Status* status) {
  if (auto generation = config::text(settings::kCompressReset)) residuals_.reset_on_change(*generation);
  uint64_t op = 0, retired_through = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    op = called_ + 1;  // the operation this call becomes
    retired_through = ops_.empty() ? called_ : ops_.front().number - 1;
  }
  return residuals_.find_or_create(buffer, count, type, stream, op, retired_through, status);
}

void StreamBridge::collect_decode_faults() {
  for (const Op& op : ops_) {
    if (!op.retired()) break;
    for (const Part& p : op.parts)
      if (p.compressed)
        if (Status fault = p.compressed->decode_fault(op.block + p.out_at); !fault.ok())
          record_failure(std::move(fault));
  }
}

size_t StreamBridge::captured_operations() const { return captured_->size(); }

bool StreamBridge::wait_until_run(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return ran_changed_.wait_for(lock, timeout, [&] { return run_ >= called_ || !error_.ok(); });
}

void StreamBridge::fail(Status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  record_failure(std::move(status));
}

void StreamBridge::begin_group() { grouping_ = true; }

dcResult_t StreamBridge::end_group() {
  grouping_ = false;
  std::vector<Part> parts = std::move(group_);
  group_.clear();
  if (parts.empty()) return dcSuccess;
  const size_t capturing = static_cast<size_t>(
      std::count_if(parts.begin(), parts.end(), [&](const Part& p) { return streams_.capturing(p.stream); }));
  if (capturing == 0) return enqueue(std::move(parts));
  if (capturing < parts.size())
    return refuse(dcInvalidUsage,
                  "DeepComm: a group's device calls are on streams of which some capture a CUDA graph and some do not");
  return enqueue_captured(std::move(parts));
}

void StreamBridge::drop_group() {
  grouping_ = false;
  group_.clear();
}

size_t StreamBridge::bytes_of(size_t count, int blocks, dcDataType_t type) {
  const size_t size = datatype_size(type);
  if (size == 0 || count > kBadSize / size / static_cast<size_t>(blocks)) return kBadSize;
  return count * size * static_cast<size_t>(blocks);
}

std::vector<device::Stream> StreamBridge::lay_out(std::vector<Part>& parts, size_t* word_bytes, size_t* bytes) {
  std::vector<device::Stream> lanes;
  for (const Part& p : parts)
    if (std::none_of(lanes.begin(), lanes.end(), [&](device::Stream s) { return s.handle == p.stream.handle; }))
      lanes.push_back(p.stream);
  *word_bytes = aligned(2 * lanes.size() * sizeof(uint64_t));
  *bytes = *word_bytes;
  for (Part& p : parts) {
    p.in_at = *bytes;
    *bytes += aligned(p.in_bytes);
    p.out_at = *bytes;
    *bytes += aligned(p.slot_out_bytes);
  }
  return lanes;
}

dcResult_t StreamBridge::refuse(dcResult_t code, const std::string& message) {
  set_last_error(message);
  return code;
}

dcResult_t StreamBridge::add(device::Stream stream, const void* send, size_t in_bytes, void* recv, size_t out_bytes,
                             Run run, bool copies_out) {
  if ((in_bytes > 0 && send == nullptr) || (copies_out && out_bytes > 0 && recv == nullptr))
    return refuse(dcInvalidArgument, "DeepComm: device operation: NULL buffer");
  Part part{.stream = stream,
            .send = send,
            .in_bytes = in_bytes,
            .recv = recv,
            .out_bytes = copies_out ? out_bytes : 0,
            .slot_out_bytes = out_bytes,
            .run = std::move(run),
            .compressed = nullptr};
  if (grouping_) {
    group_.push_back(std::move(part));
    return dcSuccess;
  }
  std::vector<Part> parts;
  parts.push_back(std::move(part));
  // A graph replays what was captured, many times: one gate number per call cannot serve that.
  return streams_.capturing(stream) ? enqueue_captured(std::move(parts)) : enqueue(std::move(parts));
}

dcResult_t StreamBridge::enqueue(std::vector<Part> parts) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const dcResult_t refused = refusal_after_failure(); refused != dcSuccess) return refused;
  // Each stream gets a doorbell and a retirement word.
  size_t word_bytes = 0, bytes = 0;
  const std::vector<device::Stream> lanes = lay_out(parts, &word_bytes, &bytes);
  auto* block = static_cast<uint8_t*>(pool_.take(bytes));
  if (block == nullptr)
    return refuse(dcSystemError, "DeepComm: cannot allocate " + std::to_string(bytes) +
                                     " bytes of pinned memory for a device operation");
  std::memset(block, 0, word_bytes);
  Op op{called_ + 1, block, lanes.size(), std::move(parts)};
  uint64_t* doorbells = op.doorbells();
  uint64_t* retirements = op.retirements();

  // Input copies and doorbells, stream by stream. Until a doorbell is on a stream, the operation
  // can still be withdrawn.
  Status status;
  size_t rung = 0;  // doorbells on their streams
  for (size_t l = 0; l < lanes.size() && status.ok(); ++l) {
    status = copy_in(lanes[l], op.parts, block);
    if (status.ok()) status = streams_.enqueue_doorbell(lanes[l], &doorbells[l], op.number, wake_fd());
    if (status.ok()) ++rung;
  }
  // Nothing will ring: the operation never was. Its block stays out of the pool, since a copy into
  // it may be on a stream already.
  if (!status.ok() && rung == 0) return refuse(status.code, status.message);
  // From here streams ring its doorbells: the operation is the bridge's, whatever follows. Each
  // stream waits for it, copies its outputs and retires.
  called_ = op.number;
  ops_.push_back(std::move(op));
  const Op& queued = ops_.back();
  for (size_t l = 0; l < lanes.size() && status.ok(); ++l) {
    status = streams_.enqueue_gate(lanes[l], gate_word_, queued.number);
    if (status.ok()) status = copy_out(lanes[l], queued.parts, block);
    if (status.ok()) status = streams_.enqueue_doorbell(lanes[l], &retirements[l], queued.number, wake_fd());
  }
  if (!status.ok()) {
    record_failure(status);
    return refuse(status.code, status.message);
  }
  return dcSuccess;
}

dcResult_t StreamBridge::enqueue_captured(std::vector<Part> parts) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (const dcResult_t refused = refusal_after_failure(); refused != dcSuccess) return refused;
  }
  // Each stream gets a doorbell and a gate word.
  size_t word_bytes = 0, bytes = 0;
  const std::vector<device::Stream> lanes = lay_out(parts, &word_bytes, &bytes);
  auto op = std::make_shared<Captured>();
  op->block = static_cast<uint8_t*>(streams_.alloc_pinned(bytes));
  if (op->block == nullptr)
    return refuse(dcSystemError, "DeepComm: cannot allocate " + std::to_string(bytes) +
                                     " bytes of pinned memory for a captured device operation");
  std::memset(op->block, 0, word_bytes);
  op->lanes = lanes.size();
  op->parts = std::move(parts);
  // The graph owns the block from here: released when the graph goes, freed by the issuing thread
  // (or, once the bridge is gone, by the keeper: captured_operations.h).
  Status status = CapturedList::retain(captured_, lanes.front(), op);
  if (!status.ok()) {
    streams_.free_pinned(op->block);  // nothing refers to it yet
    return refuse(status.code, status.message);
  }
  // Recorded, not run: a failure leaves the capture incomplete, and the graph is the user's to drop.
  for (size_t l = 0; l < lanes.size() && status.ok(); ++l) {
    status = copy_in(lanes[l], op->parts, op->block);
    if (status.ok()) status = streams_.enqueue_doorbell(lanes[l], &op->doorbells()[l], 1, wake_fd());
    if (status.ok()) status = streams_.enqueue_gate_reset(lanes[l], &op->gates()[l], 1, 0);
    if (status.ok()) status = copy_out(lanes[l], op->parts, op->block);
  }
  return status.ok() ? dcSuccess : refuse(status.code, status.message);
}

Status StreamBridge::copy_in(device::Stream lane, const std::vector<Part>& parts, uint8_t* block) {
  Status status;
  for (const Part& p : parts) {
    if (!status.ok() || p.stream.handle != lane.handle) continue;
    if (p.compressed)
      status = p.compressed->enqueue_encode(p.stream, p.send, block + p.out_at, ++compressed_calls_ << 24);
    else if (p.in_bytes > 0) status = streams_.enqueue_copy(p.stream, block + p.in_at, p.send, p.in_bytes);
  }
  return status;
}

Status StreamBridge::copy_out(device::Stream lane, const std::vector<Part>& parts, uint8_t* block) {
  Status status;
  for (const Part& p : parts) {
    if (!status.ok() || p.stream.handle != lane.handle) continue;
    if (p.compressed) status = p.compressed->enqueue_decodes(p.stream, p.recv, block + p.out_at);
    else if (p.out_bytes > 0) status = streams_.enqueue_copy(p.stream, p.recv, block + p.out_at, p.out_bytes);
  }
  return status;
}

void StreamBridge::run_captured() {
  for (const auto& rung : captured_->take_rung()) {
    const auto& op = static_cast<const Captured&>(*rung);
    Status failed;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      failed = error_;
    }
    if (failed.ok()) {
      const Status result = run(op.parts, op.block);
      if (!result.ok()) {
        std::lock_guard<std::mutex> lock(mutex_);
        record_failure(result);
      }
    }
    captured_->open_gates(op);
  }
}

void StreamBridge::issue_loop() {
  use_short_wake_slice();  // a doorbell is noticed as soon as a message is
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    free_retired();
    run_rung(lock);
    if (stopping_) break;
    lock.unlock();
    run_captured();
    lock.lock();
    if (stopping_) break;
    lock.unlock();
    captured_->wake_event().wait_and_drain(1000);  // doorbells and the destructor ring it
    lock.lock();
  }
  // Destroyed: every gate opens, and the streams get some time to leave the slots.
  streams_.open_gate(gate_word_, kAllGates);
  const auto deadline = Clock::now() + kRetireGrace;
  for (free_retired(); !ops_.empty() && Clock::now() < deadline; free_retired()) {
    lock.unlock();
    captured_->wake_event().wait_and_drain(50);
    lock.lock();
  }
}

void StreamBridge::run_rung(std::unique_lock<std::mutex>& lock) {
  // By index: callers append while the lock is released (a deque keeps its elements in place), and
  // only this thread removes. Operations run in call order, so those up to run_ have run.
  for (size_t i = 0; i < ops_.size() && !stopping_; ++i) {
    const Op& op = ops_[i];
    if (op.number <= run_) continue;
    if (!error_.ok()) {  // its gates are open already
      run_ = op.number;
      continue;
    }
    if (!op.rung()) return;  // the next one in call order has not rung on every stream
    lock.unlock();
    const Status result = run(op.parts, op.block);
    lock.lock();
    run_ = op.number;
    if (result.ok()) streams_.open_gate(gate_word_, op.number);
    else record_failure(result);
    ran_changed_.notify_all();
  }
}

// One part: the communicator's operation on its slots. Several (a group): one group of the
// communicator, whose first error wins.
Status StreamBridge::run(const std::vector<Part>& parts, uint8_t* block) {
  if (parts.size() == 1) {
    const Part& p = parts.front();
    const ResidualKeyScope key(p.send);  // DEEPCOMM_COMPRESS's error feedback: the user's buffer
    const dcResult_t result = p.run(block + p.in_at, block + p.out_at);
    return result == dcSuccess ? Status::success() : Status::failure(result, dcGetLastError());
  }
  Status first;
  auto note = [&](dcResult_t result) {
    if (result != dcSuccess && first.ok()) first = Status::failure(result, dcGetLastError());
  };
  note(dcGroupStart());
  for (const Part& p : parts) {
    const ResidualKeyScope key(p.send);
    note(p.run(block + p.in_at, block + p.out_at));
  }
  note(dcGroupEnd());
  return first;
}

// An operation's retirement doorbells follow its output copies: once all rang, its block is free.
void StreamBridge::free_retired() {
  collect_decode_faults();
  while (!ops_.empty() && ops_.front().retired()) {
    pool_.give(ops_.front().block);
    ops_.pop_front();
  }
}

dcResult_t StreamBridge::refusal_after_failure() const {
  if (error_.ok()) return dcSuccess;
  return refuse(error_.code, "DeepComm: an earlier device operation failed: " + error_.message);
}

void StreamBridge::record_failure(Status status) {
  if (error_.ok()) error_ = std::move(status);
  streams_.open_gate(gate_word_, kAllGates);
  ran_changed_.notify_all();
}

bool StreamBridge::Op::rung() const {
  for (size_t l = 0; l < lanes; ++l)
    if (load(doorbells()[l]) != number) return false;
  return true;
}

bool StreamBridge::Op::retired() const {
  for (size_t l = 0; l < lanes; ++l)
    if (load(retirements()[l]) != number) return false;
  return true;
}

}  // namespace dc
