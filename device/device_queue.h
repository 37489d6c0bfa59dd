// The device-queue contract: the one way the executor runs a local step (a step that touches only
// this rank's memory: copy, reduce, pre-multiply, finalize of an average, encode, decode). The CPU
// implementation (cpu_queue.h) runs them on host memory today; a CUDA implementation, loaded as a
// plugin (plugin_abi.h), will run the same steps on device memory. No CUDA type crosses this file:
// a stream is an opaque handle, buffers are plain addresses.
//
// Threads. One thread at a time posts (post, feed): the progress engine's handler thread, or the
// thread running a communicator's flat-board call. Completions are delivered by poll(), called by
// one thread at a time (the engine's); a queue's own threads never call a completion.
//
// Completion. A step either ends inside post() (post returns Posted::done with its status, and
// no completion is ever delivered for it) or later: then exactly one completion is delivered, by a
// later poll(). Whoever posts must accept both. The CPU queue ends a step inside post() when it is
// cheap enough to run on the posting thread (the element steps) and its stream has nothing pending,
// so the engine's hot path costs no hand-off. Steps that end later are observed either by calling
// poll() (polling), or by waiting on completion_fd() (an eventfd-like descriptor that becomes
// readable when a completion is ready; the engine adds it to its epoll) and then calling poll().
// poll() clears the descriptor's readiness before it collects completions, so a completion that
// becomes ready while poll() runs makes the descriptor readable again; has_completions() lets a
// waiter that arms an edge-triggered wait afterwards catch one that became ready just before.
//
// Ownership. Every buffer a step names (and the outputs it writes, such as EncodeStep::result) stays
// the poster's, untouched by the queue's caller and alive, until the step ended (post returned
// done, or its completion ran). The queue copies the step descriptor itself at post.
//
// Blocking. post() and feed() never wait for other steps; a step that ends inside post() runs for
// as long as the step takes (element steps: one pass over the data). poll() never blocks.
//
// Ordering. Steps on one stream (Stream::handle != 0) run and complete in post order. Steps without
// a stream are ordered by nothing but the poster's own dependencies (the plan's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "base/error.h"
#include "compression/decoder.h"
#include "compression/encoder.h"
#include "compression/form/spec.h"
#include "deepcomm/deepcomm.h"

namespace dc::device {

// An ordering domain, opaque to the engine: for the CPU queue a number naming an ordered lane, for
// a CUDA queue a cudaStream_t carried as an integer.
struct Stream {
  uint64_t handle = 0;  // 0: no stream
};

enum class StepKind : uint8_t {
  Copy,            // dst = src, bytes (overlapping ranges allowed)
  Reduce,          // dst = a op b, count elements (dst may alias a or b)
  Premultiply,     // dst = src * scalar (pre-multiplied sum)
  FinalizeAvg,     // dst = dst / divisor (average; integers truncate)
  Encode,          // a compressed message from input (+ residual), see EncodeStep
  Decode,          // a whole compressed message decoded into (or added to) its target, see DecodeStep
  DecodeArriving,  // a message decoded while its bytes arrive (feed()), see DecodeStep
};

// Statistics a decode writes (owned by the poster like any output).
struct DecodeTimes {
  double decode_seconds = 0;      // checking and unpacking
  double accumulate_seconds = 0;  // adding (or writing) values into the target
};

struct EncodeStep {
  compression::Spec spec;
  std::span<float> residual;                    // error feedback, or empty
  uint64_t seed = 0;                            // stochastic rounding's key
  std::span<uint8_t> out;                       // capacity: the codec's worst case
  compression::EncodeResult* result = nullptr;  // written before the step ends
};

struct DecodeStep {
  // Decode: the whole message. DecodeArriving: the staging buffer the bytes arrive in (its size is
  // the capacity); feed() says how much of it holds the message.
  std::span<const uint8_t> message;
  compression::Target target;
  DecodeTimes* times = nullptr;  // written before the step ends; may be null
};

struct LocalStep {
  StepKind kind = StepKind::Copy;
  dcDataType_t type = dcFloat32;
  dcRedOp_t op = dcSum;  // Reduce: a built-in op (avg reduces as sum)
  void* dst = nullptr;
  const void* src = nullptr;
  const void* src2 = nullptr;  // Reduce: the second operand
  size_t count = 0;            // elements (Copy: bytes)
  int divisor = 1;             // FinalizeAvg
  uint8_t scalar[8] = {};      // Premultiply: the factor, in the datatype itself
  EncodeStep encode;           // Encode: dst/src/count unused except src = input, count = elements
  DecodeStep decode;           // Decode, DecodeArriving

  static LocalStep copy(void* dst, const void* src, size_t bytes) {
    LocalStep s;
    s.dst = dst, s.src = src, s.count = bytes;
    return s;
  }
  static LocalStep reduce(dcDataType_t type, dcRedOp_t op, void* dst, const void* a, const void* b, size_t count) {
    LocalStep s;
    s.kind = StepKind::Reduce, s.type = type, s.op = op, s.dst = dst, s.src = a, s.src2 = b, s.count = count;
    return s;
  }
  // scalar: datatype_size(type) bytes (at most 8).
  static LocalStep premultiply(dcDataType_t type, void* dst, const void* src, size_t count, const void* scalar);
  static LocalStep finalize_avg(dcDataType_t type, void* data, size_t count, int divisor) {
    LocalStep s;
    s.kind = StepKind::FinalizeAvg, s.type = type, s.dst = data, s.count = count, s.divisor = divisor;
    return s;
  }
  static LocalStep encode_step(dcDataType_t type, const void* input, size_t count, EncodeStep encode) {
    LocalStep s;
    s.kind = StepKind::Encode, s.type = type, s.src = input, s.count = count, s.encode = std::move(encode);
    return s;
  }
  static LocalStep decode_step(StepKind kind, DecodeStep decode) {  // Decode or DecodeArriving
    LocalStep s;
    s.kind = kind, s.type = decode.target.type, s.decode = decode;
    return s;
  }
};

// Where a step's completion goes: fn(context, tag, status) runs on the thread calling poll(). Plain
// data, so that posting allocates nothing and the same shape crosses the plugin ABI; context must
// stay valid until the completion ran.
struct Completion {
  void (*fn)(void* context, uint64_t tag, const Status& status) = nullptr;
  void* context = nullptr;
  uint64_t tag = 0;
};

// What post() did: ended the step (done, with its status) or accepted it (id, for feed()).
struct Posted {
  bool done = false;
  Status status;    // when done
  uint64_t id = 0;  // when accepted
};

class DeviceQueue {
 public:
  virtual ~DeviceQueue() = default;

  // Starts a step. Bad input (an unknown kind or datatype) ends it inside post() with an error.
  virtual Posted post(const LocalStep& step, Stream stream, Completion completion) = 0;
  // DecodeArriving only: the first `available` bytes of the staging buffer hold the message (never
  // decreasing); `ended` once the receive ended, with its status (the step then ends after the
  // bytes were used, with the first error seen). Posting thread; before the step ended.
  virtual void feed(uint64_t id, size_t available, const Status* ended) = 0;
  // Runs the completions ready now on the calling thread; returns how many ran. Never blocks.
  virtual size_t poll() = 0;
  // Readable while completions wait for poll(); -1 when the queue has none (everything ends in post).
  virtual int completion_fd() const = 0;
  // Whether a completion waits for poll() (cheap; any thread).
  virtual bool has_completions() const = 0;
  // Whether every element step (copy, reduce, pre-multiply, finalize) posted without a stream ends
  // inside post(). The executor reduces a received message piece by piece while the transport
  // holds the piece, and pre-multiplies an input before the plan's first step, only on such a queue.
  virtual bool element_steps_end_at_post() const = 0;
};

}  // namespace dc::device
