// The encoders of the CPU codec steps (cpu_steps.cpp). An encoder keeps its scratch memory from
// call to call (tens of megabytes for a large gradient), so encoders are kept for reuse, one per
// encode running at once, and freed on demand: suspending a communicator gives the idle ones back.
// Process-wide and thread-safe.
#pragma once

#include <cstddef>
#include <memory>

#include "compression/encoder.h"

namespace dc::device {

// An encoder lent for one encode; back to the pool when the lease ends.
class EncoderLease {
 public:
  EncoderLease();
  ~EncoderLease();
  EncoderLease(const EncoderLease&) = delete;
  EncoderLease& operator=(const EncoderLease&) = delete;
  compression::Encoder& operator*() { return *encoder_; }
  compression::Encoder* operator->() { return encoder_.get(); }

 private:
  std::unique_ptr<compression::Encoder> encoder_;
};

// Frees the encoders no encode is using now, with their scratch; returns how many.
size_t release_idle_encoders();

}  // namespace dc::device
