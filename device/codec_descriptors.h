// What the device codec's descriptors (plugin_abi.h's dcDeviceEncode_t and dcDeviceDecode_t) ask
// for, checked, in the codec's vocabulary. Header-only: the CPU stream queue and the CUDA plugin
// (which links no room) read descriptors the same way.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"
#include "compression/element.h"
#include "compression/form/spec.h"
#include "compression/gpu/dense_decode.h"
#include "compression/gpu/dense_encode_layout.h"
#include "device/plugin_abi.h"

namespace dc::device {

// Throws dc::Error(dcInvalidArgument) for a datatype other than float32, float16 or bfloat16, a
// block or chunk size the wire format lacks, more elements than one message holds.
inline compression::Spec encode_spec_of(const dcDeviceEncode_t& e) {
  using compression::Spec;
  auto refuse = [](const std::string& why) { fail(dcInvalidArgument, "DeepComm device encode: " + why); };
  if (e.datatype != dcFloat32 && e.datatype != dcFloat16 && e.datatype != dcBfloat16)
    refuse("datatype " + std::to_string(e.datatype) + ": float32, float16 or bfloat16 only");
  if (e.block < Spec::kMinBlock || e.block > Spec::kMaxBlock) refuse("block of " + std::to_string(e.block));
  if (e.chunk_log2 < Spec::kMinChunkLog2 || e.chunk_log2 > Spec::kMaxChunkLog2)
    refuse("chunk of 2^" + std::to_string(e.chunk_log2) + " elements");
  if (e.count > UINT32_MAX) refuse(std::to_string(e.count) + " elements do not fit one message");
  if (e.count > 0 && !e.input) refuse("null input");
  if (!e.message || !e.result) refuse("null message or result");
  Spec spec;
  spec.q8 = true;
  spec.rounding = e.stochastic ? compression::Rounding::stochastic : compression::Rounding::nearest;
  spec.block = e.block;
  spec.huffman = e.huffman != 0;
  spec.error_feedback = e.residual != nullptr;
  spec.beta = e.beta;
  spec.chunk_log2 = e.chunk_log2;
  return spec;
}

inline compression::ElemType encode_elem_type_of(const dcDeviceEncode_t& e) {
  return e.datatype == dcFloat16    ? compression::ElemType::f16
         : e.datatype == dcBfloat16 ? compression::ElemType::bf16
                                    : compression::ElemType::f32;
}

// What the stream cannot report itself. Everything about the message and the target (its type,
// count, address) is the decoder's to refuse, with the CPU decoder's words. Throws
// dc::Error(dcInvalidArgument).
inline void check_decode_descriptor(const dcDeviceDecode_t& d) {
  if (d.message_bytes > 0 && !d.message) fail(dcInvalidArgument, "DeepComm device decode: null message");
  if (!d.error) fail(dcInvalidArgument, "DeepComm device decode: null error words");
}

// The workspace bytes each asks for (the same on the GPU and in the CPU's emulation). Throw as the
// checks above.
inline uint64_t encode_workspace_bytes_of(const dcDeviceEncode_t& e) {
  return compression::gpu::layout_of(compression::gpu::dense_encode_args(encode_spec_of(e), encode_elem_type_of(e),
                                                                         e.input, e.count, e.residual, e.seed, nullptr,
                                                                         e.message))
      .bytes;
}

inline uint64_t decode_workspace_bytes_of(const dcDeviceDecode_t& d) {
  check_decode_descriptor(d);
  return compression::gpu::dense_decode_workspace_bytes(d.count);
}

}  // namespace dc::device
