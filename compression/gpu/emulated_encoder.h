// The GPU encoder's kernels (dense_encode.h) run on the CPU through the kernel emulator: what the
// tests and `compress_perf --engine emulated` use to show that the device writes the CPU
// encoder's bytes. Slow by design (one emulated thread after the other); not a CPU codec.
#pragma once

#include <cstdint>
#include <span>

#include "compression/encoder.h"
#include "kernels/block_emulator.h"

namespace dc::compression::gpu {

// Whether the GPU encoder takes `spec`: dense q8 (huffman, ef and stochastic rounding allowed).
// Sparse and auto specs are encoded on the CPU for now.
bool device_encodes(const Spec& spec);

// Encoder::encode's contract and result (select_seconds covers the quantize stage, code_seconds
// the rest), for a spec device_encodes takes; throws dc::Error(dcInvalidArgument) for another.
EncodeResult encode_emulated(const Spec& spec, dcDataType_t type, const void* input, uint64_t count,
                             std::span<float> residual, uint64_t seed, std::span<uint8_t> out,
                             kernels::GridShape grid = {4, 32},
                             kernels::EmulatorMode mode = kernels::EmulatorMode::Sequential);

}  // namespace dc::compression::gpu
