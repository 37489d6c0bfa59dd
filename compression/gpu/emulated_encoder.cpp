#include "compression/gpu/emulated_encoder.h"

#include <chrono>
#include <memory>

#include "base/error.h"
#include "compression/gpu/dense_encode_layout.h"
#include "compression/gpu/sparse_encode.h"
#include "compression/gpu/sparse_encode_layout.h"

namespace dc::compression::gpu {
namespace {

constexpr CrcTables kCrcTables = make_crc_tables();

// A workspace of `bytes`, aligned as a GPU allocation is.
struct Workspace {
  explicit Workspace(size_t bytes) : memory(std::make_unique_for_overwrite<uint8_t[]>(bytes + kWorkspaceAlign)) {}
  uint8_t* base() const {
    return memory.get() + (kWorkspaceAlign - reinterpret_cast<uintptr_t>(memory.get()) % kWorkspaceAlign);
  }
  std::unique_ptr<uint8_t[]> memory;
};

// Runs every stage of `stages` over the grid, one after the other.
template <class Args, class Stages>
void run_stages(const Args& args, Stages&& stages, kernels::GridShape grid, kernels::EmulatorMode mode) {
  stages(args, [&]<void (*Stage)(const kernels::ThreadCoords&, const Args&)>(uint64_t) {
    kernels::emulate_grid(grid, mode, [&](const kernels::ThreadCoords& t) { Stage(t, args); });
  });
}

}  // namespace

bool device_encodes(const Spec& spec) {
  return spec.selection == Selection::topk_exact || spec.selection == Selection::topk_sampled ||
         (spec.selection == Selection::dense && spec.q8);
}

EncodeResult encode_emulated(const Spec& spec, dcDataType_t type, const void* input, uint64_t count,
                             std::span<float> residual, uint64_t seed, std::span<uint8_t> out, kernels::GridShape grid,
                             kernels::EmulatorMode mode) {
  return encode_emulated_keeping(spec, spec.sparse() ? kept_target(spec.fraction, count) : count, type, input, count,
                                 residual, seed, out, grid, mode);
}

EncodeResult encode_emulated_keeping(const Spec& spec, uint64_t kept, dcDataType_t type, const void* input,
                                     uint64_t count, std::span<float> residual, uint64_t seed, std::span<uint8_t> out,
                                     kernels::GridShape grid, kernels::EmulatorMode mode) {
  if (!device_encodes(spec))
    fail(dcInvalidArgument, "compression spec '" + spec.to_string() +
                                "': the GPU encoder takes dense q8 and top-k specs; auto is chosen on the CPU");
  const ElemType elem = check_encode_arguments(spec, type, input, count, residual, out.size());
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  EncodeResult result;
  result.applied = spec;
  if (spec.sparse()) {
    if (count > 0 && (kept == 0 || kept > count))
      fail(dcInvalidArgument,
           "compression: a top-k of " + std::to_string(kept) + " of " + std::to_string(count) + " elements");
    SparseEncodeArgs args =
        sparse_encode_args(spec, kept, elem, input, count, residual.data(), seed, &kCrcTables, out.data());
    const SparseEncodeLayout layout = layout_of(args);
    const Workspace workspace(layout.bytes);
    place_in(args, layout, workspace.base());
    *args.state = SparseEncodeState{};
    run_stages(
        args, [](const auto& a, auto&& stage) { for_each_sparse_stage(a, stage); }, grid, mode);
    result.bytes = args.state->message_bytes;
    result.sent = args.state->entries;
    result.nonfinite = args.state->nonfinite != 0;
  } else {
    DenseEncodeArgs args = dense_encode_args(spec, elem, input, count, residual.data(), seed, &kCrcTables, out.data());
    const DenseEncodeLayout layout = layout_of(args);
    const Workspace workspace(layout.bytes);
    place_in(args, layout, workspace.base());
    *args.state = DenseEncodeState{};
    run_stages(
        args, [](const auto& a, auto&& stage) { for_each_dense_stage(a, stage); }, grid, mode);
    result.bytes = args.state->message_bytes;
    result.sent = count;
    result.nonfinite = args.state->nonfinite != 0;
  }
  // The stages run back to back; the emulation times them as one.
  result.code_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace dc::compression::gpu
