#include "compression/gpu/emulated_encoder.h"

#include <chrono>
#include <memory>

#include "base/error.h"
#include "compression/gpu/dense_encode_layout.h"

namespace dc::compression::gpu {
namespace {

constexpr CrcTables kCrcTables = make_crc_tables();

using Stage = void (*)(const kernels::ThreadCoords&, const DenseEncodeArgs&);

void run(Stage stage, const DenseEncodeArgs& args, kernels::GridShape grid, kernels::EmulatorMode mode) {
  kernels::emulate_grid(grid, mode, [&](const kernels::ThreadCoords& t) { stage(t, args); });
}

}  // namespace

bool device_encodes(const Spec& spec) { return spec.selection == Selection::dense && spec.q8; }

EncodeResult encode_emulated(const Spec& spec, dcDataType_t type, const void* input, uint64_t count,
                             std::span<float> residual, uint64_t seed, std::span<uint8_t> out, kernels::GridShape grid,
                             kernels::EmulatorMode mode) {
  if (!device_encodes(spec))
    fail(dcInvalidArgument, "compression spec '" + spec.to_string() +
                                "': the GPU encoder takes dense q8 specs; sparse and auto ones are encoded on the CPU");
  const ElemType elem = check_encode_arguments(spec, type, input, count, residual, out.size());
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();

  DenseEncodeArgs args = dense_encode_args(spec, elem, input, count, residual.data(), seed, &kCrcTables, out.data());
  const DenseEncodeLayout layout = layout_of(args);
  const auto workspace = std::make_unique_for_overwrite<uint8_t[]>(layout.bytes + kWorkspaceAlign);
  uint8_t* base = workspace.get() + (kWorkspaceAlign - reinterpret_cast<uintptr_t>(workspace.get()) % kWorkspaceAlign);
  place_in(args, layout, base);
  *args.state = DenseEncodeState{};

  run(quantize, args, grid, mode);
  const Clock::time_point quantized = Clock::now();
  if (spec.huffman) {
    run(histogram, args, grid, mode);
    run(build_table, args, grid, mode);
    run(encode_streams, args, grid, mode);
  }
  for (Stage stage : {size_chunks, place_chunks, write_chunks, write_header}) run(stage, args, grid, mode);

  EncodeResult result;
  result.bytes = args.state->message_bytes;
  result.sent = count;
  result.nonfinite = args.state->nonfinite != 0;
  result.applied = spec;
  result.select_seconds = std::chrono::duration<double>(quantized - start).count();
  result.code_seconds = std::chrono::duration<double>(Clock::now() - quantized).count();
  return result;
}

}  // namespace dc::compression::gpu
