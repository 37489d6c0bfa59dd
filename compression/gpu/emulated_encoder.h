// The GPU encoder's kernels (dense_encode.h, topk_select.h, sparse_encode.h) run on the CPU
// through the kernel emulator: what the tests and `compress_perf --engine emulated` use to show
// that the device writes the CPU encoder's bytes. Slow by design (one emulated thread after the
// other); not a CPU codec.
#pragma once

#include <cstdint>
#include <span>

#include "compression/encoder.h"
#include "kernels/block_emulator.h"

namespace dc::compression::gpu {

// Whether the GPU encoder takes `spec`: dense q8 and top-k (exact or sampled), with huffman, ef
// and stochastic rounding. Auto specs choose from statistics on the CPU.
bool device_encodes(const Spec& spec);

// Encoder::encode's contract and result (code_seconds covers every stage), for a spec
// device_encodes takes; throws dc::Error(dcInvalidArgument) for another.
EncodeResult encode_emulated(const Spec& spec, dcDataType_t type, const void* input, uint64_t count,
                             std::span<float> residual, uint64_t seed, std::span<uint8_t> out,
                             kernels::GridShape grid = {4, 32},
                             kernels::EmulatorMode mode = kernels::EmulatorMode::Sequential);

// The same with a top-k's k given (a device descriptor's), rather than the spec's fraction's.
EncodeResult encode_emulated_keeping(const Spec& spec, uint64_t kept, dcDataType_t type, const void* input,
                                     uint64_t count, std::span<float> residual, uint64_t seed, std::span<uint8_t> out,
                                     kernels::GridShape grid = {4, 32},
                                     kernels::EmulatorMode mode = kernels::EmulatorMode::Sequential);

}  // namespace dc::compression::gpu
