#include "compression/gpu/emulated_decoder.h"

#include <memory>

#include "base/error.h"
#include "compression/gpu/dense_decode.h"

namespace dc::compression::gpu {
namespace {

constexpr CrcTables kCrcTables = make_crc_tables();

using Stage = void (*)(const kernels::ThreadCoords&, const DenseDecodeArgs&);

}  // namespace

DecodeError decode_emulated(std::span<const uint8_t> message, const Target& dst, kernels::GridShape grid,
                            kernels::EmulatorMode mode) {
  const auto state = std::make_unique<DenseDecodeState>();
  std::unique_ptr<uint8_t[]> symbols;
  DenseDecodeArgs args{message.data(), message.size(), dst.type,    dst.data, dst.count,
                       dst.overwrite,  &kCrcTables,    state.get(), nullptr};
  // Each stage, then the fault it reported, if any.
  auto run = [&](Stage stage) {
    kernels::emulate_grid(grid, mode, [&](const kernels::ThreadCoords& t) { stage(t, args); });
    return reported_error(state->report);
  };
  DecodeError error = run(parse_message);
  if (error.fault != DecodeFault::none) return error;
  // The header matched the target's count: one symbol per element.
  if (state->layout.flags & wire::kHuffman) {
    symbols = std::make_unique_for_overwrite<uint8_t[]>(dst.count);
    args.symbols = symbols.get();
  }
  for (Stage stage : {check_checksums, decode_symbols, accumulate_values})
    if ((error = run(stage)).fault != DecodeFault::none) return error;
  return error;
}

void decode_accumulate_emulated(std::span<const uint8_t> message, const Target& dst, kernels::GridShape grid,
                                kernels::EmulatorMode mode) {
  const DecodeError error = decode_emulated(message, dst, grid, mode);
  if (error.fault != DecodeFault::none) fail(dcInvalidArgument, decode_error_message(error));
}

}  // namespace dc::compression::gpu
