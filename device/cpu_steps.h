// What the CPU device queue does for each step kind, on the calling thread: the element steps
// through the kernels (kernels/reduce.h), the codec steps through the codecs (compression/). Errors
// come back as a status, never as an exception. A message that does not decode is the sender's
// fault: dcRemoteError.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "compression/piece_decoder.h"
#include "device/device_queue.h"

namespace dc::device {

// Copy, Reduce, Premultiply, FinalizeAvg: cheap enough to run where they are posted.
inline bool is_element_step(StepKind kind) { return kind <= StepKind::FinalizeAvg; }

Status run_element_step(const LocalStep& step);
// What an element step on a stream must be, as the CUDA plugin checks it before its launch
// (plugins/cuda/element_launch.h): a reduce of a built-in op, a pre-multiply or a finalize of an
// average (divisor at least 1), of a known datatype, its pointers non-null and aligned to the
// element unless it has no elements. dcInvalidArgument naming what is wrong.
Status check_stream_step(const LocalStep& step);
// Encode, Decode.
Status run_codec_step(const LocalStep& step);

Status decode_failed(const std::string& what);

// A DecodeArriving step's state, shared by the posting thread (which advances `available` and sets
// `received`) and one worker job at a time (`scheduled`), which consumes what arrived.
struct ArrivingMessage {
  explicit ArrivingMessage(const DecodeStep& step) : step(step), decoder(step.target) {}
  const DecodeStep step;
  std::mutex mutex;
  size_t available = 0;
  std::optional<Status> received;  // the receive's outcome, once known
  bool scheduled = false;
  size_t consumed = 0;  // by the decoder (worker side)
  std::string error;    // the decoder's, after which nothing more is consumed
  double decode_seconds = 0;
  compression::PieceDecoder decoder;
};

// Worker side: decodes what arrived; returns the step's status once it ended (the receive ended and
// everything was used), nothing while more is to come or another job took over.
std::optional<Status> consume_arrived(ArrivingMessage& message);

}  // namespace dc::device
