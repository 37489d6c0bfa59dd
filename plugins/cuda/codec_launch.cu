#include "plugins/cuda/codec_launch.h"

#include <string>

#include "compression/gpu/dense_decode.h"
#include "compression/gpu/dense_encode_layout.h"
#include "device/codec_descriptors.h"
#include "plugins/cuda/cuda_check.h"

namespace dc::cuda {
namespace {

using namespace dc::compression;
using gpu::DenseDecodeArgs;
using gpu::DenseEncodeArgs;

constexpr unsigned kCodecThreads = 128;

__device__ const gpu::CrcTables kDeviceCrcTables = gpu::make_crc_tables();

// One kernel per stage: Stage is the stage body's address, a template argument so that each
// kernel calls its body directly.
template <class Args, void (*Stage)(const kernels::ThreadCoords&, const Args&)>
__global__ void codec_stage(Args args) {
  Stage(kernels::ThreadCoords{blockIdx.x, gridDim.x, threadIdx.x, blockDim.x}, args);
}

__global__ void report_encode(const gpu::DenseEncodeState* state, uint32_t* result) {
  result[0] = state->message_bytes;
  result[1] = state->nonfinite;
}

__global__ void report_decode(const gpu::DenseDecodeState* state, uint64_t* error) {
  gpu::pack_decode_error(gpu::reported_error(state->report), error);
}

[[noreturn]] void refuse(const std::string& why) { fail(dcInvalidArgument, "DeepComm CUDA plugin: encode: " + why); }

const gpu::CrcTables* device_crc_tables() {
  void* address = nullptr;
  DC_CUDA_CHECK(cudaGetSymbolAddress(&address, kDeviceCrcTables));
  return static_cast<const gpu::CrcTables*>(address);
}

DenseEncodeArgs args_of(const dcDeviceEncode_t& e, const gpu::CrcTables* crc) {
  return gpu::dense_encode_args(device::encode_spec_of(e), device::encode_elem_type_of(e), e.input, e.count, e.residual,
                                e.seed, crc, e.message);
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
void load(size_t* count) {
  cudaFuncAttributes attributes{};
  DC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, codec_stage<Args, Stage>));
  ++*count;
}

}  // namespace

uint64_t encode_workspace_bytes(const dcDeviceEncode_t& encode) { return device::encode_workspace_bytes_of(encode); }

void enqueue_encode(const dcDeviceEncode_t& e, cudaStream_t stream, unsigned max_blocks) {
  DenseEncodeArgs args = args_of(e, device_crc_tables());
  if (!e.workspace) refuse("null workspace");
  if (reinterpret_cast<uintptr_t>(e.workspace) % gpu::kWorkspaceAlign != 0)
    refuse("workspace not aligned to " + std::to_string(gpu::kWorkspaceAlign) + " bytes");
  const gpu::DenseEncodeLayout layout = gpu::layout_of(args);
  gpu::place_in(args, layout, static_cast<uint8_t*>(e.workspace));
  DC_CUDA_CHECK(cudaMemsetAsync(args.state, 0, sizeof(gpu::DenseEncodeState), stream));
  using A = DenseEncodeArgs;
  launch<A, gpu::quantize>(args, args.blocks, stream, max_blocks);
  if (args.huffman) {
    launch<A, gpu::histogram>(args, args.chunks, stream, max_blocks);
    launch<A, gpu::build_table>(args, 1, stream, max_blocks);
    launch<A, gpu::encode_streams>(args, uint64_t(args.chunks) * wire::kMaxStreams, stream, max_blocks);
  }
  launch<A, gpu::size_chunks>(args, args.chunks, stream, max_blocks);
  launch<A, gpu::place_chunks>(args, 1, stream, max_blocks);
  launch<A, gpu::write_chunks>(args, args.chunks, stream, max_blocks);
  launch<A, gpu::write_header>(args, 1, stream, max_blocks);
  report_encode<<<1, 1, 0, stream>>>(args.state, e.result);
  DC_CUDA_CHECK(cudaGetLastError());
}

uint64_t decode_workspace_bytes(const dcDeviceDecode_t& decode) { return device::decode_workspace_bytes_of(decode); }

void enqueue_decode(const dcDeviceDecode_t& d, cudaStream_t stream, unsigned max_blocks) {
  device::check_decode_descriptor(d);
  if (!d.workspace || reinterpret_cast<uintptr_t>(d.workspace) % 256 != 0)
    fail(dcInvalidArgument, "DeepComm CUDA plugin: decode: a null workspace or one not aligned to 256 bytes");
  // The grids are sized by what the descriptor says (the target's count); a stage whose message
  // says otherwise finds the fault parse_message recorded and does nothing.
  DenseDecodeArgs args{d.message,
                       d.message_bytes,
                       static_cast<dcDataType_t>(d.datatype),
                       d.dst,
                       d.count,
                       d.overwrite != 0,
                       device_crc_tables(),
                       nullptr,
                       nullptr};
  gpu::place_decode_workspace(args, static_cast<uint8_t*>(d.workspace));
  const uint64_t chunks = (d.count + (uint64_t(1) << Spec::kMinChunkLog2) - 1) >> Spec::kMinChunkLog2;
  using A = DenseDecodeArgs;
  launch<A, gpu::parse_message>(args, 1, stream, max_blocks);
  launch<A, gpu::check_checksums>(args, chunks, stream, max_blocks);
  launch<A, gpu::decode_symbols>(args, chunks * wire::kMaxStreams, stream, max_blocks);
  launch<A, gpu::accumulate_values>(args, d.count, stream, max_blocks);
  report_decode<<<1, 1, 0, stream>>>(args.state, d.error);
  DC_CUDA_CHECK(cudaGetLastError());
}

size_t load_codec_kernels() {
  size_t count = 0;
  using E = DenseEncodeArgs;
  load<E, gpu::quantize>(&count);
  load<E, gpu::histogram>(&count);
  load<E, gpu::build_table>(&count);
  load<E, gpu::encode_streams>(&count);
  load<E, gpu::size_chunks>(&count);
  load<E, gpu::place_chunks>(&count);
  load<E, gpu::write_chunks>(&count);
  load<E, gpu::write_header>(&count);
  using D = DenseDecodeArgs;
  load<D, gpu::parse_message>(&count);
  load<D, gpu::check_checksums>(&count);
  load<D, gpu::decode_symbols>(&count);
  load<D, gpu::accumulate_values>(&count);
  cudaFuncAttributes attributes{};
  DC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, report_encode));
  DC_CUDA_CHECK(cudaFuncGetAttributes(&attributes, report_decode));
  return count + 2;
}

}  // namespace dc::cuda
