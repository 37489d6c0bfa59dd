// The GPU decoder's kernels (decode.h) run on the CPU through the kernel emulator: what the
// tests and the fuzz replay use to show that the device adds exactly the CPU decoder's values and
// refuses the messages it refuses, with the same words. Slow by design; not a CPU codec.
#pragma once

#include <cstdint>
#include <span>

#include "compression/decoder.h"
#include "kernels/block_emulator.h"

namespace dc::compression::gpu {

// The stages on the CPU: DecodeFault::none when dst got the message's values (the CPU decoder's
// bits), else the fault the CPU decoder reports (decode_error_message gives its words), for dense
// and sparse messages alike.
DecodeError decode_emulated(std::span<const uint8_t> message, const Target& dst, kernels::GridShape grid = {4, 32},
                            kernels::EmulatorMode mode = kernels::EmulatorMode::Sequential);

// decode_accumulate(message, dst)'s contract: the same bits in dst, or the same
// dc::Error(dcInvalidArgument).
void decode_accumulate_emulated(std::span<const uint8_t> message, const Target& dst, kernels::GridShape grid = {4, 32},
                                kernels::EmulatorMode mode = kernels::EmulatorMode::Sequential);

}  // namespace dc::compression::gpu
