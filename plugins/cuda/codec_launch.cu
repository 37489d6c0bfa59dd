#include "plugins/cuda/codec_launch.h"

#include <string>

#include "compression/gpu/decode.h"
#include "compression/gpu/dense_encode_layout.h"
#include "compression/gpu/sparse_encode.h"
#include "compression/gpu/sparse_encode_layout.h"
#include "device/codec_descriptors.h"
#include "plugins/cuda/cuda_check.h"

namespace dc::cuda {
namespace {

using namespace dc::compression;
using gpu::DecodeArgs;
using gpu::DenseEncodeArgs;
using gpu::SparseEncodeArgs;

constexpr unsigned kCodecThreads = 128;

__device__ const gpu::CrcTables kDeviceCrcTables = gpu::make_crc_tables();

// One kernel per stage: Stage is the stage body's address, a template argument so that each
// kernel calls its body directly.
template <class Args, void (*Stage)(const kernels::ThreadCoords&, const Args&)>
__global__ void codec_stage(Args args) {
  Stage(kernels::ThreadCoords{blockIdx.x, gridDim.x, threadIdx.x, blockDim.x}, args);
}

__global__ void report_dense_encode(const gpu::DenseEncodeState* state, uint64_t count, uint32_t* result) {
  result[0] = state->message_bytes;
  result[1] = state->nonfinite;
  result[2] = uint32_t(count);
}

__global__ void report_sparse_encode(const gpu::SparseEncodeState* state, uint32_t* result) {
  result[0] = state->message_bytes;
  result[1] = state->nonfinite != 0;
  result[2] = uint32_t(state->entries);
}

__global__ void report_decode(const gpu::DecodeState* state, uint64_t* error) {
  gpu::pack_decode_error(gpu::reported_error(state->report), error);
}

[[noreturn]] void refuse(const std::string& why) { fail(dcInvalidArgument, "DeepComm CUDA plugin: encode: " + why); }

const gpu::CrcTables* device_crc_tables() {
  void* address = nullptr;
  DC_CUDA_CHECK(cudaGetSymbolAddress(&address, kDeviceCrcTables));
  return static_cast<const gpu::CrcTables*>(address);
}

// A stage over `items` items: a grid of them, capped at max_blocks (each thread loops over the rest).
template <class Args, void (*Stage)(const kernels::ThreadCoords&, const Args&)>
void launch(const Args& args, uint64_t items, cudaStream_t stream, unsigned max_blocks) {
  const uint64_t wanted = (items + kCodecThreads - 1) / kCodecThreads;
  const unsigned blocks = wanted == 0 ? 1 : wanted < max_blocks ? unsigned(wanted) : max_blocks;
  codec_stage<Args, Stage><<<blocks, items <= 1 ? 1 : kCodecThreads, 0, stream>>>(args);
  DC_CUDA_CHECK(cudaGetLastError());
}

template <class Args, void (*Stage)(const kernels::ThreadCoords&, const Args&)>
void load() {
  cudaFuncAttributes attributes{};
  DC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, codec_stage<Args, Stage>));
}

}  // namespace

uint64_t encode_workspace_bytes(const dcDeviceEncode_t& encode) { return device::encode_workspace_bytes_of(encode); }

// Places the workspace, clears the state, then launches every stage of the encode in order.
template <class Args, class Layout, class Stages>
void enqueue_stages(Args& args, const Layout& layout, void* workspace, Stages&& stages, cudaStream_t stream,
                    unsigned max_blocks) {
  gpu::place_in(args, layout, static_cast<uint8_t*>(workspace));
  DC_CUDA_CHECK(cudaMemsetAsync(args.state, 0, sizeof(*args.state), stream));
  stages(args, [&]<void (*Stage)(const kernels::ThreadCoords&, const Args&)>(uint64_t items) {
    launch<Args, Stage>(args, items, stream, max_blocks);
  });
}

void enqueue_encode(const dcDeviceEncode_t& e, cudaStream_t stream, unsigned max_blocks) {
  const Spec spec = device::encode_spec_of(e);
  if (!e.workspace) refuse("null workspace");
  if (reinterpret_cast<uintptr_t>(e.workspace) % gpu::kWorkspaceAlign != 0)
    refuse("workspace not aligned to " + std::to_string(gpu::kWorkspaceAlign) + " bytes");
  const ElemType type = device::encode_elem_type_of(e);
  if (spec.sparse()) {
    SparseEncodeArgs args = gpu::sparse_encode_args(spec, device::encode_kept_of(e), type, e.input, e.count, e.residual,
                                                    e.seed, device_crc_tables(), e.message);
    enqueue_stages(
        args, gpu::layout_of(args), e.workspace,
        [](const SparseEncodeArgs& a, auto&& stage) { gpu::for_each_sparse_stage(a, stage); }, stream, max_blocks);
    report_sparse_encode<<<1, 1, 0, stream>>>(args.state, e.result);
  } else {
    DenseEncodeArgs args =
        gpu::dense_encode_args(spec, type, e.input, e.count, e.residual, e.seed, device_crc_tables(), e.message);
    enqueue_stages(
        args, gpu::layout_of(args), e.workspace,
        [](const DenseEncodeArgs& a, auto&& stage) { gpu::for_each_dense_stage(a, stage); }, stream, max_blocks);
    report_dense_encode<<<1, 1, 0, stream>>>(args.state, e.count, e.result);
  }
  DC_CUDA_CHECK(cudaGetLastError());
}

uint64_t decode_workspace_bytes(const dcDeviceDecode_t& decode) { return device::decode_workspace_bytes_of(decode); }

void enqueue_decode(const dcDeviceDecode_t& d, cudaStream_t stream, unsigned max_blocks) {
  device::check_decode_descriptor(d);
  if (!d.workspace || reinterpret_cast<uintptr_t>(d.workspace) % 256 != 0)
    fail(dcInvalidArgument, "DeepComm CUDA plugin: decode: a null workspace or one not aligned to 256 bytes");
  // The grids are sized by what the descriptor says (the target's count); a stage whose message
  // says otherwise finds the fault parse_message recorded and does nothing.
  DecodeArgs args{d.message,
                  d.message_bytes,
                  static_cast<dcDataType_t>(d.datatype),
                  d.dst,
                  d.count,
                  d.overwrite != 0,
                  device_crc_tables(),
                  nullptr,
                  nullptr,
                  d.message_bytes_at};
  gpu::place_decode_workspace(args, static_cast<uint8_t*>(d.workspace));
  gpu::for_each_decode_stage(d.count,
                             [&]<void (*Stage)(const kernels::ThreadCoords&, const DecodeArgs&)>(uint64_t items) {
                               launch<DecodeArgs, Stage>(args, items, stream, max_blocks);
                             });
  report_decode<<<1, 1, 0, stream>>>(args.state, d.error);
  DC_CUDA_CHECK(cudaGetLastError());
}

void load_codec_kernels() {
  // Every stage of each list: the specs that use the most stages (Huffman; a sampled top-k), and
  // the exact top-k's histogram.
  DenseEncodeArgs dense{};
  dense.huffman = true;
  gpu::for_each_dense_stage(dense, [&]<void (*Stage)(const kernels::ThreadCoords&, const DenseEncodeArgs&)>(uint64_t) {
    load<DenseEncodeArgs, Stage>();
  });
  SparseEncodeArgs sparse{};
  sparse.huffman = sparse.sampled = true;
  gpu::for_each_sparse_stage(sparse, [&]<void (*Stage)(const kernels::ThreadCoords&, const SparseEncodeArgs&)>(
                                         uint64_t) { load<SparseEncodeArgs, Stage>(); });
  load<SparseEncodeArgs, gpu::magnitude_histogram>();
  gpu::for_each_decode_stage(
      1, [&]<void (*Stage)(const kernels::ThreadCoords&, const DecodeArgs&)>(uint64_t) { load<DecodeArgs, Stage>(); });
  cudaFuncAttributes attributes{};
  DC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, report_dense_encode));
  DC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, report_sparse_encode));
  DC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, report_decode));
}

}  // namespace dc::cuda
