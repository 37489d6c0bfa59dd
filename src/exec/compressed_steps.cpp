// The steps of compressed plans (plan.h): message transfers whose length is known only at run
// time, and codec work on the codec pool's workers, so that encoding or decoding a large buffer
// never holds up the progress engine. A job captures pointers into the operation's buffers, which
// stay the operation's until it ends (release waits for every job), and posts its status back to
// the engine. A message that fails to decode is the sender's fault: dcRemoteError.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "compression/compression.h"
#include "src/exec/codec_pool.h"
#include "src/exec/engine.h"
#include "src/exec/operation.h"

namespace dc {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

Status remote_error(const std::string& what) {
  return Status::failure(dcRemoteError, "DeepComm: a compressed message did not decode: " + what);
}

// Runs job, turning what it throws into a status.
template <class Job>
Status guarded(Job&& job) {
  try {
    return job();
  } catch (const Error& e) {
    return Status::failure(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return Status::failure(dcSystemError, "DeepComm: out of memory in a codec job");
  } catch (const std::exception& e) {
    return Status::failure(dcInternalError, std::string("DeepComm: internal error in a codec job: ") + e.what());
  }
}

// A RecvDecode step's message, decoded on a worker while it arrives: the engine copies each piece
// into the staging buffer and advances `available`; one worker job at a time (`scheduled`)
// consumes what is there and ends the step once the receive completed and everything was used.
struct ArrivingMessage {
  explicit ArrivingMessage(const compression::Target& target, const uint8_t* staging)
      : staging(staging), decoder(target) {}
  const uint8_t* staging;
  std::mutex mutex;
  size_t available = 0;
  std::optional<Status> received;  // the receive's outcome, once known
  bool scheduled = false;
  size_t consumed = 0;             // by the decoder (worker side)
  std::string error;               // the decoder's, after which nothing more is consumed
  compression::PieceDecoder decoder;
};

struct DecodeTimes {
  double decode = 0, accumulate = 0;
};

}  // namespace

void Operation::on_worker(uint32_t index, std::function<Status()> job, std::function<void()> then) {
  ++codec_jobs_;
  auto self = shared_from_this();
  CodecPool::instance().submit([self, index, job = std::move(job), then = std::move(then)] {
    const Status status = guarded(job);
    Engine::instance().post([self, index, status, then] {
      if (status.ok() && then) then();
      self->codec_job_finished(index, status);
    });
  });
}

void Operation::codec_job_finished(uint32_t index, const Status& status) {
  --codec_jobs_;
  if (!completed_) return step_finished(index, status);
  release_if_unused();  // the operation ended while this job ran
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
      post_send(peer, tag_of(step), address(step.src), length, [self, index, peer](const Status& s) {
        self->step_finished(index, self->explained(s, peer));
      });
      return;
    }
    case StepKind::RecvMessage:
      // Posts the worst case; completes with the real length.
      post_recv(peer, tag_of(step), address(step.dst), step.bytes, nullptr, [self, index, peer](const Status& s, size_t got) {
        if (s.ok()) self->lengths_[self->prepared_->plan.steps[index].slot] = got;
        self->step_finished(index, self->explained(s, peer));
      });
      return;
    default:
      step_finished(index, Status::failure(dcInternalError, "DeepComm: not a message step"));
  }
}

void Operation::run_encode(uint32_t index) {
  const Step& st = prepared_->plan.steps[index];
  const CompressedCall& call = *args_.compressed;
  const void* input = address(st.src);
  float* residual = call.spec.error_feedback ? reinterpret_cast<float*>(address(st.aux)) : nullptr;
  const std::span<uint8_t> out(reinterpret_cast<uint8_t*>(address(st.dst)), st.bytes);
  // Stochastic rounding needs fresh noise every call and step.
  const uint64_t seed = (seq_ << 24) ^ index;
  auto result = std::make_shared<compression::EncodeResult>();
  auto self = shared_from_this();
  on_worker(
      index,
      [spec = call.spec, type = args_.datatype, input, count = st.count, residual, seed, out, result] {
        thread_local compression::Encoder encoder;  // scratch memory, one per worker
        *result = encoder.encode(spec, type, input, count,
                                 residual ? std::span<float>(residual, count) : std::span<float>(), seed, out);
        return Status::success();
      },
      [self, index, result] {
        self->lengths_[self->prepared_->plan.steps[index].slot] = result->bytes;
        self->stats_.selectSeconds += result->select_seconds;
        self->stats_.encodeSeconds += result->code_seconds;
      });
}

void Operation::run_decode(uint32_t index) {
  const Step& st = prepared_->plan.steps[index];
  const std::span<const uint8_t> message(reinterpret_cast<const uint8_t*>(address(st.src)), lengths_[st.slot]);
  const compression::Target target{args_.datatype, address(st.dst), st.count, st.overwrite};
  auto times = std::make_shared<DecodeTimes>();
  auto self = shared_from_this();
  on_worker(
      index,
      [message, target, times] {
        const Clock::time_point start = Clock::now();
        try {
          compression::decode_accumulate(message, target, compression::Isa::best, &times->accumulate);
        } catch (const Error& e) {
          return remote_error(e.what());
        }
        times->decode = since(start) - times->accumulate;
        return Status::success();
      },
      [self, times] {
        self->stats_.decodeSeconds += times->decode;
        self->stats_.accumulateSeconds += times->accumulate;
      });
}

namespace {

void consume_arrived(const std::shared_ptr<ArrivingMessage>& a, DecodeTimes& times) {
  const Clock::time_point start = Clock::now();
  for (;;) {
    size_t from = 0, to = 0;
    {
      std::lock_guard<std::mutex> lock(a->mutex);
      from = a->consumed;
      to = a->error.empty() ? a->available : from;
      if (from == to) {
        a->scheduled = false;  // the engine schedules again when more arrives
        break;
      }
    }
    try {
      a->decoder.consume({a->staging + from, to - from});
    } catch (const Error& e) {
      std::lock_guard<std::mutex> lock(a->mutex);
      a->error = e.what();
    }
    std::lock_guard<std::mutex> lock(a->mutex);
    a->consumed = to;
  }
  times.decode += since(start);
}

}  // namespace

void Operation::run_recv_decode(uint32_t index) {
  const Step& st = prepared_->plan.steps[index];
  uint8_t* staging = reinterpret_cast<uint8_t*>(address(st.aux));
  auto arriving = std::make_shared<ArrivingMessage>(
      compression::Target{args_.datatype, address(st.dst), st.count, st.overwrite}, staging);
  auto times = std::make_shared<DecodeTimes>();
  auto self = shared_from_this();
  ++codec_jobs_;  // the decode, which ends only after the receive did
  // Engine side: more bytes (or the receive's end) arrived; start a worker unless one runs.
  auto feed = [self, index, arriving, times](size_t available, std::optional<Status> received) {
    {
      std::lock_guard<std::mutex> lock(arriving->mutex);
      arriving->available = std::max(arriving->available, available);
      if (received) arriving->received = received;
      if (arriving->scheduled) return;
      arriving->scheduled = true;
    }
    CodecPool::instance().submit([self, index, arriving, times] {
      consume_arrived(arriving, *times);
      Status status;
      {
        std::lock_guard<std::mutex> lock(arriving->mutex);
        if (arriving->scheduled || !arriving->received) return;  // more to come, or another job took over
        arriving->scheduled = true;  // this job ends the step; nothing schedules another
        status = *arriving->received;
        if (status.ok() && !arriving->error.empty()) status = remote_error(arriving->error);
      }
      if (status.ok()) {
        try {
          arriving->decoder.finish();  // a truncated message is an error too
        } catch (const Error& e) {
          status = remote_error(e.what());
        }
      }
      times->accumulate = arriving->decoder.accumulate_seconds();
      Engine::instance().post([self, index, status, times] {
        self->stats_.decodeSeconds += times->decode - times->accumulate;
        self->stats_.accumulateSeconds += times->accumulate;
        self->codec_job_finished(index, status);
      });
    });
  };
  const int peer = st.peer;
  PieceSink sink = [feed, staging](const void* data, size_t offset, size_t len) {
    std::memcpy(staging + offset, data, len);  // within the capacity: the transport checks the length
    feed(offset + len, std::nullopt);
  };
  Completion done = [self, feed, peer](const Status& s, size_t got) {
    // A message that went to the staging buffer whole arrives here at once.
    feed(s.ok() ? got : 0, s.ok() ? s : self->explained(s, peer));
  };
  post_recv(peer, tag_of(st), staging, st.bytes, std::move(sink), std::move(done));
}

void Operation::write_stats() {
  stats_.totalSeconds = std::chrono::duration<double>(Clock::now() - started_).count();
  stats_.ratio = stats_.wireBytes ? double(stats_.rawBytes) / double(stats_.wireBytes) : 0.0;
  std::snprintf(stats_.algorithm, sizeof stats_.algorithm, "%s", prepared_->plan.algorithm.c_str());
  if (args_.compressed->stats) *args_.compressed->stats = stats_;
}

}  // namespace dc
