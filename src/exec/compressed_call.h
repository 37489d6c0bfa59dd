// The codec side of a compressed all-reduce, carried by its OpArgs: the spec, the buffer's
// error-feedback state (kept across calls by a native handle or by the communicator's store) and
// where the call's statistics go.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "compression/form/spec.h"
#include "compression/residual.h"
#include "deepcomm/deepcomm.h"

namespace dc {

struct ResidualState {
  explicit ResidualState(uint64_t count) : values(count) {}
  compression::Residual values;  // float32 whatever the buffer's type
  // Operations issued with it and not yet complete: resetting or destroying it meanwhile would
  // race with their encoders.
  std::atomic<int> in_use{0};
};

struct CompressedCall {
  compression::Spec spec;
  uint64_t spec_hash = 0;                   // of the canonical text, in the operation's signature
  std::shared_ptr<ResidualState> residual;  // null without ef
  dcCompressStats_t* stats = nullptr;       // written when the operation completes; may be null
};

// FNV-1a of the spec's canonical text: ranks that call with different specs get an error naming
// the mismatch instead of messages they cannot size.
uint64_t spec_hash(const compression::Spec& spec);

}  // namespace dc
