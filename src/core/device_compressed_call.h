// A compressed all-reduce of device buffers whose codec runs on the device (DEEPCOMM_COMPRESS,
// sum): the stream bridge's sparse all-gather. On the user's stream, before the doorbell, the GPU
// encoder writes this rank's message straight into the operation's pinned block (only compressed
// bytes cross PCIe); the issuing thread exchanges the messages, the lengths first; after the gate
// the stream decodes every rank's message in rank order into the output, the first one
// overwriting, as the host's sparsegather plan does, so the result has the bits of that plan on
// host buffers. A message the decoder refuses is the sender's fault: the bridge reports it as the
// communicator's asynchronous error (dcRemoteError) once the stream passed it.
//
// Its slot in the operation's block: the encode's result words, each rank's message length, each
// decode's error words, then a message slot per rank of the worst-case size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/error.h"
#include "compression/form/spec.h"
#include "deepcomm/deepcomm.h"
#include "device/stream_queue.h"

namespace dc {

// Device memory that the codec calls of one stream share (they run one after the other on it, the
// encode before the gate and the decodes after it). It grows to the largest asked for; what it
// outgrew is kept until release, since freeing device memory (cudaFree) waits for every stream,
// and a stream may be waiting at a gate that only the thread that would free it opens.
class StreamWorkspace {
 public:
  void* take(device::StreamQueue& streams, size_t bytes, Status* status);
  void release(device::StreamQueue& streams);

 private:
  void* memory_ = nullptr;
  size_t bytes_ = 0;
  std::vector<void*> outgrown_;
};

class DeviceCompressedCall {
 public:
  // residual: device memory of count floats (null without error feedback); workspace: the
  // stream's.
  DeviceCompressedCall(device::StreamQueue& streams, const compression::Spec& spec, size_t count, dcDataType_t type,
                       dcRedOp_t op, int rank, int nranks, float* residual, StreamWorkspace& workspace);

  // The bytes its slot takes.
  size_t slot_bytes() const { return messages_at_ + size_t(nranks_) * capacity_; }

  // Before the doorbell: clears the slot's words (host stores, before the stream gets there) and
  // enqueues the encode of send.
  Status enqueue_encode(device::Stream stream, const void* send, uint8_t* slot, uint64_t seed);
  // The issuing thread: the lengths, then the messages, of every rank. Fails with the
  // communicator's error; a rank whose encode failed (length 0: every rank learns it) or whose
  // message is longer than the worst case fails every rank (dcRemoteError, dcInternalError on it).
  dcResult_t exchange(dcComm_t comm, uint8_t* slot) const;
  // After the gate: the decodes of every rank's message into recv, in rank order (then, for an
  // average, the division by the ranks).
  Status enqueue_decodes(device::Stream stream, void* recv, uint8_t* slot);
  // Once the stream passed the decodes: the first message the decoder refused, as dcRemoteError.
  Status decode_fault(const uint8_t* slot) const;

  DeviceCompressedCall(const DeviceCompressedCall&) = delete;
  DeviceCompressedCall& operator=(const DeviceCompressedCall&) = delete;

 private:
  uint32_t* result_words(uint8_t* slot) const { return reinterpret_cast<uint32_t*>(slot); }
  uint64_t* lengths(uint8_t* slot) const { return reinterpret_cast<uint64_t*>(slot + lengths_at_); }
  uint64_t* error_words(uint8_t* slot, int r) const {
    return reinterpret_cast<uint64_t*>(slot + errors_at_) + 3 * size_t(r);
  }
  const uint64_t* error_words(const uint8_t* slot, int r) const {
    return reinterpret_cast<const uint64_t*>(slot + errors_at_) + 3 * size_t(r);
  }
  uint8_t* message(uint8_t* slot, int r) const { return slot + messages_at_ + size_t(r) * capacity_; }

  device::StreamQueue& streams_;
  compression::Spec spec_;
  size_t count_;
  dcDataType_t type_;
  dcRedOp_t op_;  // dcSum or dcAvg
  int rank_, nranks_;
  float* residual_;
  size_t capacity_;  // a message's worst case, rounded up to the slot alignment
  size_t lengths_at_, errors_at_, messages_at_;
  StreamWorkspace& workspace_;
};

}  // namespace dc
