#include "compression/gpu/emulated_decoder.h"

#include <memory>

#include "base/error.h"
#include "compression/gpu/decode.h"

namespace dc::compression::gpu {
namespace {

constexpr CrcTables kCrcTables = make_crc_tables();

}  // namespace

DecodeError decode_emulated(std::span<const uint8_t> message, const Target& dst, kernels::GridShape grid,
                            kernels::EmulatorMode mode) {
  const auto state = std::make_unique<DecodeState>();
  std::unique_ptr<uint8_t[]> symbols;
  DecodeArgs args{message.data(), message.size(), dst.type,    dst.data, dst.count,
                  dst.overwrite,  &kCrcTables,    state.get(), nullptr};
  // The stages as a stream runs them, all of them (a fault that decode_symbols recorded is not the
  // message's until check_offsets found no earlier one; the stages after a fault do nothing). The
  // workspace's byte per element comes once the header matched the target: a caller of the plugin
  // allocates it for a target it has, while a test's target count may be a forged header's.
  for_each_decode_stage(dst.count, [&]<void (*Stage)(const kernels::ThreadCoords&, const DecodeArgs&)>(uint64_t) {
    if (Stage != &parse_message && !args.symbols) return;
    kernels::emulate_grid(grid, mode, [&](const kernels::ThreadCoords& t) { Stage(t, args); });
    if (Stage == &parse_message && reported_error(state->report).fault == DecodeFault::none) {
      symbols = std::make_unique_for_overwrite<uint8_t[]>(dst.count + 1);  // an address for 0 elements too
      args.symbols = symbols.get();
    }
  });
  return reported_error(state->report);
}

void decode_accumulate_emulated(std::span<const uint8_t> message, const Target& dst, kernels::GridShape grid,
                                kernels::EmulatorMode mode) {
  const DecodeError error = decode_emulated(message, dst, grid, mode);
  if (error.fault != DecodeFault::none) fail(dcInvalidArgument, decode_error_message(error));
}

}  // namespace dc::compression::gpu
