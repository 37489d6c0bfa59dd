// The steps of compressed plans (plan.h): message transfers whose length is known only at run
// time, and codec steps posted to the device queue (device/device_queue.h), whose CPU queue runs
// them on workers, so that encoding or decoding a large buffer never holds up the progress engine.
// A step names the operation's buffers, which stay the operation's until it ends (release waits
// for every local step); its completion comes back to the engine. A message that fails to decode
// is the sender's fault: dcRemoteError (device/cpu_steps.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "compression/compression.h"
#include "src/exec/operation.h"

namespace dc {

void Operation::take_codec_output(uint32_t index) {
  auto output = codec_outputs_.find(index);
  if (output == codec_outputs_.end()) return;  // not a codec step
  const Step& st = prepared_->plan.steps[index];
  if (st.kind == StepKind::Encode) {
    lengths_[st.slot] = output->second.encode.bytes;
    stats_.selectSeconds += output->second.encode.select_seconds;
    stats_.encodeSeconds += output->second.encode.code_seconds;
  } else {
    stats_.decodeSeconds += output->second.times.decode_seconds;
    stats_.accumulateSeconds += output->second.times.accumulate_seconds;
  }
  codec_outputs_.erase(output);
}

void Operation::run_message_step(uint32_t index) {
  const Step& step = prepared_->plan.steps[index];
  auto self = shared_from_this();
  const int peer = step.peer;
  switch (step.kind) {
    case StepKind::Encode: return run_encode(index);
    case StepKind::Decode: return run_decode(index);
    case StepKind::RecvDecode: return run_recv_decode(index);
    case StepKind::SendMessage: {
      // Forwarded or own: the length is the one its slot got, from the encoder or the receive.
      const uint64_t length = lengths_[step.slot];
      stats_.rawBytes += step.count * elem_size_;
      stats_.wireBytes += length;
      ++stats_.messages;
      post_send(peer, tag_of(step), address(step.src), length,
                [self, index, peer](const Status& s) { self->step_finished(index, self->explained(s, peer)); });
      return;
    }
    case StepKind::RecvMessage:
      // Posts the worst case; completes with the real length.
      post_recv(peer, tag_of(step), address(step.dst), step.bytes, nullptr,
                [self, index, peer](const Status& s, size_t got) {
                  if (s.ok()) self->lengths_[self->prepared_->plan.steps[index].slot] = got;
                  self->step_finished(index, self->explained(s, peer));
                });
      return;
    default: step_finished(index, Status::failure(dcInternalError, "DeepComm: not a message step"));
  }
}

void Operation::run_encode(uint32_t index) {
  const Step& st = prepared_->plan.steps[index];
  const CompressedCall& call = *args_.compressed;
  device::EncodeStep encode;
  encode.spec = call.spec;
  if (call.spec.error_feedback) encode.residual = {reinterpret_cast<float*>(address(st.aux)), st.count};
  encode.seed = (seq_ << 24) ^ index;  // stochastic rounding needs fresh noise every call and step
  encode.out = {reinterpret_cast<uint8_t*>(address(st.dst)), st.bytes};
  encode.result = &codec_outputs_[index].encode;
  run_local(index, device::LocalStep::encode_step(args_.datatype, address(st.src), st.count, std::move(encode)));
}

void Operation::run_decode(uint32_t index) {
  const Step& st = prepared_->plan.steps[index];
  device::DecodeStep decode;
  decode.message = {reinterpret_cast<const uint8_t*>(address(st.src)), lengths_[st.slot]};
  decode.target = {args_.datatype, address(st.dst), st.count, st.overwrite};
  decode.times = &codec_outputs_[index].times;
  run_local(index, device::LocalStep::decode_step(device::StepKind::Decode, decode));
}

// The message is decoded while it arrives: the engine copies each piece into the staging buffer
// and tells the device queue how much is there; the step ends once the receive ended and every
// byte was used.
void Operation::run_recv_decode(uint32_t index) {
  const Step& st = prepared_->plan.steps[index];
  uint8_t* staging = reinterpret_cast<uint8_t*>(address(st.aux));
  device::DecodeStep decode;
  decode.message = {staging, st.bytes};
  decode.target = {args_.datatype, address(st.dst), st.count, st.overwrite};
  decode.times = &codec_outputs_[index].times;
  device::DeviceQueue& queue = *queue_;
  const device::Posted posted =
      queue.post(device::LocalStep::decode_step(device::StepKind::DecodeArriving, decode), device::Stream{},
                 device::Completion{&Operation::local_step_completed, this, index});
  if (posted.done) return step_finished(index, posted.status);
  local_step_accepted();  // the decode, which ends only after the receive did
  const uint64_t id = posted.id;
  auto self = shared_from_this();
  const int peer = st.peer;
  PieceSink sink = [&queue, id, staging](const void* data, size_t offset, size_t len) {
    std::memcpy(staging + offset, data, len);  // within the capacity: the transport checks the length
    queue.feed(id, offset + len, nullptr);
  };
  Completion done = [self, &queue, id, peer](const Status& s, size_t got) {
    // A message that went to the staging buffer whole arrives here at once.
    const Status ended = s.ok() ? s : self->explained(s, peer);
    queue.feed(id, s.ok() ? got : 0, &ended);
  };
  post_recv(peer, tag_of(st), staging, st.bytes, std::move(sink), std::move(done));
}

void Operation::write_stats() {
  stats_.totalSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  stats_.ratio = stats_.wireBytes ? double(stats_.rawBytes) / double(stats_.wireBytes) : 0.0;
  std::snprintf(stats_.algorithm, sizeof stats_.algorithm, "%s", prepared_->plan.algorithm.c_str());
  if (args_.compressed->stats) *args_.compressed->stats = stats_;
}

}  // namespace dc
