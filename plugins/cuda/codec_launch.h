// The GPU codec's kernels (compression/gpu): one __global__ function per stage, their bodies the
// text the CPU runs in the tests, compiled here by nvcc for sm_80 and sm_90 with -fmad=false so
// that they write the CPU codec's bytes and values. Enqueued on the caller's stream, one launch per
// stage, back to back: no stage needs the host between them.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "device/plugin_abi.h"

namespace dc::cuda {

// Workspace bytes an encode needs. Throws dc::Error(dcInvalidArgument) for a bad descriptor.
uint64_t encode_workspace_bytes(const dcDeviceEncode_t& encode);

// Enqueues the stages of an encode (compression/gpu/dense_encode.h, or topk_select.h and
// sparse_encode.h) on stream, then the result words. Checks the descriptor first and throws
// dc::Error before anything is enqueued: dcInvalidArgument for a datatype other than
// float32/float16/bfloat16, a block or chunk size the wire format lacks, a null pointer, a top-k's
// k outside [1, count]; dcUnhandledCudaError when a launch fails.
void enqueue_encode(const dcDeviceEncode_t& encode, cudaStream_t stream, unsigned max_blocks);

// Workspace bytes a decode needs. Throws dc::Error(dcInvalidArgument) for a bad descriptor.
uint64_t decode_workspace_bytes(const dcDeviceDecode_t& decode);

// Enqueues the stages of a decode-and-accumulate (compression/gpu/decode.h) on stream,
// then the error words. Throws dc::Error before anything is enqueued: dcInvalidArgument for a bad
// descriptor, dcUnhandledCudaError when a launch fails. What is wrong with the message or the
// target is the stream's to report, in the error words.
void enqueue_decode(const dcDeviceDecode_t& decode, cudaStream_t stream, unsigned max_blocks);

// Loads every kernel of the codec into the current device's context.
void load_codec_kernels();

}  // namespace dc::cuda
