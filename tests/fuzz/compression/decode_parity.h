// The GPU decoder (compression/gpu/decode.h, emulated) against the CPU decoder on one
// message: both must add the same bits into the target or refuse the message with the same words.
// The oracle of the compression tests' GpuDecode suite and of the fuzz_message target.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/error.h"
#include "compression/decoder.h"
#include "compression/gpu/emulated_decoder.h"

namespace dc::compression::fuzz {

// A decode to run on both: a copy of `target` (empty: a null pointer) as `count` elements of
// `type`.
struct DecodeCase {
  std::span<const uint8_t> message;
  dcDataType_t type;
  uint64_t count;
  bool overwrite;
  std::vector<uint8_t> target;
};

struct DecoderComparison {
  std::string cpu_error;   // empty: the CPU decoder added the message
  std::string difference;  // empty: the GPU decoder did the same
};

namespace parity_detail {

struct Outcome {
  std::string error;
  std::vector<uint8_t> target;
};

template <class Decode>
Outcome outcome_of(const DecodeCase& c, const Decode& decode) {
  Outcome o{"", c.target};
  try {
    decode(Target{c.type, o.target.empty() ? nullptr : o.target.data(), c.count, c.overwrite});
  } catch (const Error& e) {
    o.error = e.code() == dcInvalidArgument ? e.what() : "(not dcInvalidArgument) " + std::string(e.what());
  }
  return o;
}

}  // namespace parity_detail

// Dense and sparse messages alike: the same error, or none and the same target bytes.
inline DecoderComparison compare_decoders(const DecodeCase& c, kernels::GridShape grid, kernels::EmulatorMode mode) {
  using parity_detail::outcome_of;
  const parity_detail::Outcome cpu = outcome_of(c, [&](const Target& t) { decode_accumulate(c.message, t); });
  const parity_detail::Outcome gpu =
      outcome_of(c, [&](const Target& t) { gpu::decode_accumulate_emulated(c.message, t, grid, mode); });
  DecoderComparison r{cpu.error, ""};
  if (cpu.error != gpu.error) {
    r.difference = "the CPU decoder says '" + cpu.error + "', the GPU decoder '" + gpu.error + "'";
  } else if (cpu.error.empty() && cpu.target != gpu.target) {
    size_t i = 0;
    while (cpu.target[i] == gpu.target[i]) ++i;
    r.difference = "the targets differ from byte " + std::to_string(i);
  }
  return r;
}

}  // namespace dc::compression::fuzz
