#include "device/cpu_steps.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "compression/compression.h"
#include "device/encoder_pool.h"
#include "device/guarded.h"
#include "kernels/reduce.h"

namespace dc::device {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

Status bad_datatype(dcDataType_t type) {
  return Status::failure(dcInvalidArgument, "DeepComm: local step with unknown datatype " + std::to_string(type));
}

}  // namespace

LocalStep LocalStep::premultiply(dcDataType_t type, void* dst, const void* src, size_t count, const void* scalar) {
  LocalStep s;
  s.kind = StepKind::Premultiply, s.type = type, s.dst = dst, s.src = src, s.count = count;
  const size_t size = datatype_size(type);
  if (size <= sizeof s.scalar) std::memcpy(s.scalar, scalar, size);
  return s;
}

Status decode_failed(const std::string& what) {
  return Status::failure(dcRemoteError, "DeepComm: a compressed message did not decode: " + what);
}

Status run_element_step(const LocalStep& s) {
  if (s.kind == StepKind::Copy) {
    if (s.dst != s.src) std::memmove(s.dst, s.src, s.count);
    return Status::success();
  }
  if (datatype_size(s.type) == 0) return bad_datatype(s.type);
  return guarded([&] {
    switch (s.kind) {
      case StepKind::Reduce: reduce(s.type, s.op, s.dst, s.src, s.src2, s.count); break;
      case StepKind::Premultiply: premultiply(s.type, s.dst, s.src, s.count, s.scalar); break;
      case StepKind::FinalizeAvg: finalize_avg(s.type, s.dst, s.count, s.divisor); break;
      default: return Status::failure(dcInternalError, "DeepComm: not an element step");
    }
    return Status::success();
  });
}

Status check_stream_step(const LocalStep& s) {
  const auto refuse = [](const std::string& why) {
    return Status::failure(dcInvalidArgument, "DeepComm: an element step on a stream: " + why);
  };
  if (s.kind != StepKind::Reduce && s.kind != StepKind::Premultiply && s.kind != StepKind::FinalizeAvg)
    return refuse("not a reduce, pre-multiply or finalize of an average");
  const size_t size = datatype_size(s.type);
  if (size == 0) return refuse("unknown datatype " + std::to_string(s.type));
  if (s.kind == StepKind::Reduce && (s.op < dcSum || s.op >= dcAvg))
    return refuse("reduce op " + std::to_string(s.op) + " is not sum, prod, max or min");
  if (s.kind == StepKind::FinalizeAvg && s.divisor < 1) return refuse("divisor below 1");
  if (s.count == 0) return Status::success();
  const auto bad = [size](const void* p) { return !p || reinterpret_cast<uintptr_t>(p) % size != 0; };
  if (bad(s.dst) || (s.kind != StepKind::FinalizeAvg && bad(s.src)) || (s.kind == StepKind::Reduce && bad(s.src2)))
    return refuse("a null pointer, or one not aligned to its elements");
  return Status::success();
}

Status run_codec_step(const LocalStep& s) {
  if (s.kind == StepKind::Encode) {
    return guarded([&] {
      EncoderLease encoder;
      *s.encode.result =
          encoder->encode(s.encode.spec, s.type, s.src, s.count, s.encode.residual, s.encode.seed, s.encode.out);
      return Status::success();
    });
  }
  if (s.kind != StepKind::Decode) return Status::failure(dcInternalError, "DeepComm: not a codec step");
  return guarded([&] {
    const Clock::time_point start = Clock::now();
    double accumulate = 0;
    try {
      compression::decode_accumulate(s.decode.message, s.decode.target, compression::Isa::best, &accumulate);
    } catch (const Error& e) {
      return decode_failed(e.what());
    }
    if (s.decode.times) *s.decode.times = {since(start) - accumulate, accumulate};
    return Status::success();
  });
}

std::optional<Status> consume_arrived(ArrivingMessage& a) {
  const Clock::time_point start = Clock::now();
  for (;;) {
    size_t from = 0, to = 0;
    {
      std::lock_guard<std::mutex> lock(a.mutex);
      from = a.consumed;
      to = a.error.empty() ? a.available : from;
      if (from == to) {
        a.scheduled = false;  // the poster schedules again when more arrives
        break;
      }
    }
    try {
      a.decoder.consume({a.step.message.data() + from, to - from});
    } catch (const std::exception& e) {  // not only dc::Error: out of memory must end the step too
      std::lock_guard<std::mutex> lock(a.mutex);
      a.error = e.what();
    }
    std::lock_guard<std::mutex> lock(a.mutex);
    a.consumed = to;
  }
  a.decode_seconds += since(start);
  Status status;
  {
    std::lock_guard<std::mutex> lock(a.mutex);
    if (a.scheduled || !a.received) return std::nullopt;  // more to come, or another job took over
    a.scheduled = true;                                   // this job ends the step; nothing schedules another
    status = *a.received;
    if (status.ok() && !a.error.empty()) status = decode_failed(a.error);
  }
  if (status.ok()) {
    try {
      a.decoder.finish();  // a truncated message is an error too
    } catch (const std::exception& e) {
      status = decode_failed(e.what());
    }
  }
  if (a.step.times) {
    const double accumulate = a.decoder.accumulate_seconds();
    *a.step.times = {a.decode_seconds - accumulate, accumulate};
  }
  return status;
}

}  // namespace dc::device
