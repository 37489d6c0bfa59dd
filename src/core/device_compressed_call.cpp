#include "src/core/device_compressed_call.h"

#include <atomic>
#include <cstring>
#include <string>

#include "compression/decoder.h"
#include "compression/form/message_form.h"
#include "compression/gpu/decode_fault.h"
#include "device/codec_descriptors.h"

namespace dc {
namespace {

constexpr size_t kAlign = 64;
size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

}  // namespace

void* StreamWorkspace::take(device::StreamQueue& streams, size_t bytes, Status* status) {
  *status = Status::success();
  if (bytes <= bytes_) return memory_;
  void* grown = streams.alloc_device(bytes, status);
  if (!status->ok()) return nullptr;
  if (memory_) outgrown_.push_back(memory_);
  memory_ = grown;
  bytes_ = bytes;
  return memory_;
}

void StreamWorkspace::release(device::StreamQueue& streams) {
  for (void* p : outgrown_) streams.free_device(p);
  if (memory_) streams.free_device(memory_);
  outgrown_.clear();
  memory_ = nullptr;
  bytes_ = 0;
}

DeviceCompressedCall::DeviceCompressedCall(device::StreamQueue& streams, const compression::Spec& spec, size_t count,
                                           dcDataType_t type, dcRedOp_t op, int rank, int nranks, float* residual,
                                           StreamWorkspace& workspace)
    : streams_(streams),
      spec_(spec),
      count_(count),
      type_(type),
      op_(op),
      rank_(rank),
      nranks_(nranks),
      residual_(residual),
      capacity_(aligned(size_t(compression::max_message_bytes(spec, count)))),
      lengths_at_(kAlign),
      errors_at_(lengths_at_ + aligned(sizeof(uint64_t) * size_t(nranks))),
      messages_at_(errors_at_ + aligned(3 * sizeof(uint64_t) * size_t(nranks))),
      workspace_(workspace) {}

Status DeviceCompressedCall::enqueue_encode(device::Stream stream, const void* send, uint8_t* slot, uint64_t seed) {
  std::memset(slot, 0, messages_at_);
  dcDeviceEncode_t e{};
  e.datatype = type_;
  device::describe_encode(spec_, compression::kept_target(spec_.fraction, count_), e);
  e.input = send;
  e.residual = residual_;
  e.count = count_;
  e.seed = seed;
  e.message = message(slot, rank_);
  e.result = result_words(slot);
  Status status;
  const uint64_t workspace = streams_.encode_workspace_bytes(e, &status);
  if (!status.ok()) return status;
  e.workspace = workspace_.take(streams_, workspace, &status);
  if (!status.ok()) return status;
  return streams_.enqueue_encode(stream, e);
}

dcResult_t DeviceCompressedCall::exchange(dcComm_t comm, uint8_t* slot) const {
  uint64_t* length = lengths(slot);
  // 0 when this rank's encode failed: the ranks still meet, and all of them fail.
  const uint64_t mine = std::atomic_ref<uint32_t>(result_words(slot)[0]).load(std::memory_order_acquire);
  // On a failure the lengths go back to 0: the decodes then refuse empty messages and read nothing.
  auto failed = [&](dcResult_t result, const std::string& why) {
    std::memset(length, 0, sizeof(uint64_t) * size_t(nranks_));
    if (!why.empty()) set_last_error(why);
    return result;
  };
  dcResult_t result = dcAllGather(&mine, length, 1, dcUint64, comm, nullptr);
  if (result != dcSuccess) return failed(result, "");
  for (int r = 0; r < nranks_; ++r) {
    if (length[r] == 0)
      return failed(r == rank_ ? dcInternalError : dcRemoteError,
                    "DeepComm: the device encode of rank " + std::to_string(r) + " failed (compressed all-reduce)");
    if (length[r] > capacity_)
      return failed(dcRemoteError, "DeepComm: rank " + std::to_string(r) + "'s compressed message of " +
                                       std::to_string(length[r]) + " bytes is over the worst case of " +
                                       std::to_string(capacity_));
  }
  result = dcGroupStart();
  for (int r = 0; r < nranks_ && result == dcSuccess; ++r) {
    if (r == rank_) continue;
    result = dcSend(message(slot, rank_), mine, dcUint8, r, comm, nullptr);
    if (result == dcSuccess) result = dcRecv(message(slot, r), length[r], dcUint8, r, comm, nullptr);
  }
  const dcResult_t ended = dcGroupEnd();
  if (result == dcSuccess) result = ended;
  return result == dcSuccess ? dcSuccess : failed(result, "");
}

Status DeviceCompressedCall::enqueue_decodes(device::Stream stream, void* recv, uint8_t* slot) {
  dcDeviceDecode_t d{};
  d.datatype = type_;
  d.message = message(slot, 0);
  d.message_bytes = capacity_;
  d.error = error_words(slot, 0);
  d.dst = recv;
  d.count = count_;
  Status status;
  const uint64_t workspace = streams_.decode_workspace_bytes(d, &status);
  if (!status.ok()) return status;
  // The encode's memory serves too: the decodes run after it, one after the other, on the stream.
  d.workspace = workspace_.take(streams_, workspace, &status);
  if (!status.ok()) return status;
  for (int r = 0; r < nranks_ && status.ok(); ++r) {
    d.overwrite = r == 0;
    d.message = message(slot, r);
    d.message_bytes_at = &lengths(slot)[r];
    d.error = error_words(slot, r);
    status = streams_.enqueue_decode(stream, d);
  }
  if (status.ok() && op_ == dcAvg) {  // the host plan's finalize: the sum divided by the ranks
    dcDeviceStep_t finalize{};
    finalize.kind = dcDeviceStepFinalizeAvg;
    finalize.datatype = type_;
    finalize.divisor = nranks_;
    finalize.dst = recv;
    finalize.count = count_;
    status = streams_.enqueue_step(stream, finalize);
  }
  return status;
}

Status DeviceCompressedCall::decode_fault(const uint8_t* slot) const {
  for (int r = 0; r < nranks_; ++r) {
    const compression::gpu::DecodeError e = compression::gpu::unpack_decode_error(error_words(slot, r));
    if (e.fault != compression::gpu::DecodeFault::none)
      return Status::failure(dcRemoteError, "DeepComm: the compressed message of rank " + std::to_string(r) +
                                                " was refused on the device: " + compression::decode_error_message(e));
  }
  return Status::success();
}

}  // namespace dc
