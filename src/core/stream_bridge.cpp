#include "src/core/stream_bridge.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "base/log.h"
#include "kernels/reduce.h"

namespace dc {

namespace {

using Clock = std::chrono::steady_clock;

// How long a destroyed bridge waits for its streams to leave the slots, after opening every gate.
constexpr std::chrono::seconds kRetireGrace{5};
constexpr size_t kSlotAlignment = 64;

uint64_t load(const uint64_t& word) {
  return std::atomic_ref<uint64_t>(const_cast<uint64_t&>(word)).load(std::memory_order_acquire);
}

// Waits at most timeout_ms for fd to become readable, then empties it.
void wait_and_drain(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) > 0) {
    uint64_t count = 0;
    [[maybe_unused]] ssize_t n = read(fd, &count, sizeof count);
  }
}

void wake(int fd) {
  const uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(fd, &one, sizeof one);
}

}  // namespace

StreamBridge::StreamBridge(dcComm_t comm, device::StreamQueue& streams) : comm_(comm), streams_(streams) {
  if (dcCommCount(comm, &nranks_) != dcSuccess || dcCommRank(comm, &rank_) != dcSuccess)
    dc::fail(dcInvalidArgument, std::string("DeepComm: stream bridge: ") + dcGetLastError());
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) dc::fail(dcSystemError, std::string("DeepComm: stream bridge: eventfd: ") + std::strerror(errno));
  const size_t word_bytes = (2 * kRing + 1) * sizeof(uint64_t);
  words_ = static_cast<uint64_t*>(streams_.alloc_pinned(word_bytes));
  if (words_ == nullptr) {
    close(wake_fd_);
    dc::fail(dcSystemError, "DeepComm: stream bridge: cannot allocate its pinned doorbell and gate words");
  }
  std::memset(words_, 0, word_bytes);
  gate_word_ = words_ + 2 * kRing;
  issuer_ = std::thread(&StreamBridge::issue_loop, this);
}

StreamBridge::~StreamBridge() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake(wake_fd_);
  issuer_.join();
  // Streams that never retired their operations may still write the words and the descriptor:
  // they stay, rather than be reused under them.
  if (!ops_.empty()) {
    DC_WARN(
        "stream bridge destroyed while %zu device operations had not left their streams: their pinned memory "
        "is left allocated",
        ops_.size());
    return;
  }
  streams_.free_pinned(words_);
  close(wake_fd_);
}

dcResult_t StreamBridge::all_reduce(const void* send, void* recv, size_t count, dcDataType_t type, dcRedOp_t op,
                                    device::Stream stream) {
  const size_t bytes = bytes_of(count, 1, type);
  if (bytes == kBadSize) return refuse(dcInvalidArgument, "DeepComm: device all-reduce: bad count or datatype");
  return enqueue(stream, send, bytes, recv, bytes, [=, this](const void* in, void* out) {
    return dcAllReduce(in, out, count, type, op, comm_, nullptr);
  });
}

dcResult_t StreamBridge::broadcast(const void* send, void* recv, size_t count, dcDataType_t type, int root,
                                   device::Stream stream) {
  const size_t bytes = bytes_of(count, 1, type);
  if (bytes == kBadSize || root < 0 || root >= nranks_)
    return refuse(dcInvalidArgument, "DeepComm: device broadcast: bad count, datatype or root");
  const bool sends = rank_ == root;
  return enqueue(stream, send, sends ? bytes : 0, recv, bytes, [=, this](const void* in, void* out) {
    return dcBroadcast(sends ? in : out, out, count, type, root, comm_, nullptr);
  });
}

dcResult_t StreamBridge::reduce(const void* send, void* recv, size_t count, dcDataType_t type, dcRedOp_t op, int root,
                                device::Stream stream) {
  const size_t bytes = bytes_of(count, 1, type);
  if (bytes == kBadSize || root < 0 || root >= nranks_)
    return refuse(dcInvalidArgument, "DeepComm: device reduce: bad count, datatype or root");
  // Every rank gets an output slot (the engine may use it); only the root's is copied out.
  return enqueue(
      stream, send, bytes, recv, bytes,
      [=, this](const void* in, void* out) { return dcReduce(in, out, count, type, op, root, comm_, nullptr); },
      rank_ == root);
}

dcResult_t StreamBridge::all_gather(const void* send, void* recv, size_t send_count, dcDataType_t type,
                                    device::Stream stream) {
  const size_t in = bytes_of(send_count, 1, type), out = bytes_of(send_count, nranks_, type);
  if (out == kBadSize) return refuse(dcInvalidArgument, "DeepComm: device all-gather: bad count or datatype");
  return enqueue(stream, send, in, recv, out, [=, this](const void* from, void* to) {
    return dcAllGather(from, to, send_count, type, comm_, nullptr);
  });
}

dcResult_t StreamBridge::reduce_scatter(const void* send, void* recv, size_t recv_count, dcDataType_t type,
                                        dcRedOp_t op, device::Stream stream) {
  const size_t in = bytes_of(recv_count, nranks_, type), out = bytes_of(recv_count, 1, type);
  if (in == kBadSize) return refuse(dcInvalidArgument, "DeepComm: device reduce-scatter: bad count or datatype");
  return enqueue(stream, send, in, recv, out, [=, this](const void* from, void* to) {
    return dcReduceScatter(from, to, recv_count, type, op, comm_, nullptr);
  });
}

dcResult_t StreamBridge::all_to_all(const void* send, void* recv, size_t count, dcDataType_t type,
                                    device::Stream stream) {
  const size_t bytes = bytes_of(count, nranks_, type);
  if (bytes == kBadSize) return refuse(dcInvalidArgument, "DeepComm: device all-to-all: bad count or datatype");
  return enqueue(stream, send, bytes, recv, bytes,
                 [=, this](const void* from, void* to) { return dcAlltoAll(from, to, count, type, comm_, nullptr); });
}

dcResult_t StreamBridge::gather(const void* send, void* recv, size_t count, dcDataType_t type, int root,
                                device::Stream stream) {
  const size_t in = bytes_of(count, 1, type), out = bytes_of(count, nranks_, type);
  if (out == kBadSize || root < 0 || root >= nranks_)
    return refuse(dcInvalidArgument, "DeepComm: device gather: bad count, datatype or root");
  return enqueue(
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
  return enqueue(stream, send, sends ? in : 0, recv, out, [=, this](const void* from, void* to) {
    return dcScatter(sends ? from : nullptr, to, count, type, root, comm_, nullptr);
  });
}

dcResult_t StreamBridge::send(const void* buffer, size_t count, dcDataType_t type, int peer, device::Stream stream) {
  const size_t bytes = bytes_of(count, 1, type);
  if (bytes == kBadSize || peer < 0 || peer >= nranks_)
    return refuse(dcInvalidArgument, "DeepComm: device send: bad count, datatype or peer");
  return enqueue(stream, buffer, bytes, nullptr, 0,
                 [=, this](const void* in, void*) { return dcSend(in, count, type, peer, comm_, nullptr); });
}

dcResult_t StreamBridge::recv(void* buffer, size_t count, dcDataType_t type, int peer, device::Stream stream) {
  const size_t bytes = bytes_of(count, 1, type);
  if (bytes == kBadSize || peer < 0 || peer >= nranks_)
    return refuse(dcInvalidArgument, "DeepComm: device receive: bad count, datatype or peer");
  return enqueue(stream, nullptr, 0, buffer, bytes,
                 [=, this](const void*, void* out) { return dcRecv(out, count, type, peer, comm_, nullptr); });
}

Status StreamBridge::async_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

bool StreamBridge::wait_until_run(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return ran_changed_.wait_for(lock, timeout, [&] { return run_ >= called_ || !error_.ok(); });
}

void StreamBridge::fail(Status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  record_failure(std::move(status));
}

size_t StreamBridge::bytes_of(size_t count, int blocks, dcDataType_t type) {
  const size_t size = datatype_size(type);
  if (size == 0 || count > kBadSize / size / static_cast<size_t>(blocks)) return kBadSize;
  return count * size * static_cast<size_t>(blocks);
}

dcResult_t StreamBridge::refuse(dcResult_t code, const std::string& message) {
  set_last_error(message);
  return code;
}

dcResult_t StreamBridge::enqueue(device::Stream stream, const void* send, size_t in_bytes, void* recv, size_t out_bytes,
                                 Run run, bool copies_out) {
  if ((in_bytes > 0 && send == nullptr) || (copies_out && out_bytes > 0 && recv == nullptr))
    return refuse(dcInvalidArgument, "DeepComm: device operation: NULL buffer");
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error_.ok()) return refuse(error_.code, "DeepComm: an earlier device operation failed: " + error_.message);
  if (ops_.size() >= kRing)
    return refuse(dcInvalidUsage, "DeepComm: more than " + std::to_string(kRing) +
                                      " device operations of this communicator are waiting for their streams");
  const size_t out_at = (in_bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment;
  auto* slot = static_cast<uint8_t*>(streams_.alloc_pinned(out_at + out_bytes));
  if (slot == nullptr)
    return refuse(dcSystemError, "DeepComm: cannot allocate " + std::to_string(out_at + out_bytes) +
                                     " bytes of pinned memory for a device operation");
  const uint64_t number = called_ + 1;
  Status status = in_bytes > 0 ? streams_.enqueue_copy(stream, slot, send, in_bytes) : Status::success();
  if (status.ok()) status = streams_.enqueue_doorbell(stream, &rung_word(number), number, wake_fd_);
  if (!status.ok()) {  // nothing of the operation reaches the stream's gate: it never was
    streams_.free_pinned(slot);
    return refuse(status.code, status.message);
  }
  // From here the stream rings the doorbell: the operation is the bridge's, whatever follows.
  called_ = number;
  ops_.push_back(Op{number, slot, out_at, std::move(run)});
  status = streams_.enqueue_gate(stream, gate_word_, number);
  if (status.ok() && copies_out && out_bytes > 0)
    status = streams_.enqueue_copy(stream, recv, slot + out_at, out_bytes);
  if (status.ok()) status = streams_.enqueue_doorbell(stream, &retired_word(number), number, wake_fd_);
  if (!status.ok()) {
    record_failure(status);
    return refuse(status.code, status.message);
  }
  return dcSuccess;
}

void StreamBridge::issue_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    free_retired();
    run_rung(lock);
    if (stopping_) break;
    lock.unlock();
    wait_and_drain(wake_fd_, 1000);  // doorbells and the destructor write it
    lock.lock();
  }
  // Destroyed: every gate opens, and the streams get some time to leave the slots.
  streams_.open_gate(gate_word_, kAllGates);
  const auto deadline = Clock::now() + kRetireGrace;
  for (free_retired(); !ops_.empty() && Clock::now() < deadline; free_retired()) {
    lock.unlock();
    wait_and_drain(wake_fd_, 50);
    lock.lock();
  }
}

void StreamBridge::run_rung(std::unique_lock<std::mutex>& lock) {
  // By index: callers append while the lock is released, and only this thread removes.
  for (size_t i = 0; i < ops_.size() && !stopping_; ++i) {
    if (ops_[i].ran) continue;
    const uint64_t number = ops_[i].number;
    if (load(rung_word(number)) != number) return;  // the next one in call order has not rung
    if (!error_.ok()) {                             // its gate is open already
      ops_[i].ran = true;
      run_ = number;
      continue;
    }
    const Run run = ops_[i].run;
    uint8_t* slot = ops_[i].slot;
    const size_t out_at = ops_[i].out_at;
    lock.unlock();
    const dcResult_t result = run(slot, slot + out_at);
    const std::string message = result == dcSuccess ? std::string() : dcGetLastError();
    lock.lock();
    ops_[i].ran = true;
    run_ = number;
    if (result == dcSuccess) streams_.open_gate(gate_word_, number);
    else record_failure(Status::failure(result, message));
    ran_changed_.notify_all();
  }
}

// An operation's retirement doorbell follows its copy out on the stream: its slot is free.
void StreamBridge::free_retired() {
  while (!ops_.empty() && load(retired_word(ops_.front().number)) == ops_.front().number) {
    streams_.free_pinned(ops_.front().slot);
    ops_.pop_front();
  }
}

void StreamBridge::record_failure(Status status) {
  if (error_.ok()) error_ = std::move(status);
  streams_.open_gate(gate_word_, kAllGates);
  ran_changed_.notify_all();
}

}  // namespace dc
