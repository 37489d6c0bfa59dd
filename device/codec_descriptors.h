// What the device codec's descriptors (plugin_abi.h's dcDeviceEncode_t and dcDeviceDecode_t) ask
// for, checked, in the codec's vocabulary. Header-only: the CPU stream queue and the CUDA plugin
// (which links no room) read descriptors the same way.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"
#include "compression/element.h"
#include "compression/form/spec.h"
#include "compression/gpu/decode.h"
#include "compression/gpu/dense_encode_layout.h"
#include "compression/gpu/sparse_encode_layout.h"
#include "device/plugin_abi.h"

namespace dc::device {

// Throws dc::Error(dcInvalidArgument) for a datatype other than float32, float16 or bfloat16, a
// block or chunk size the wire format lacks, more elements than one message holds, a selection or
// value form it does not name, a top-k's k outside [1, count]. The spec's fraction is not
// recoverable: a top-k's k is encode_kept_of's.
inline compression::Spec encode_spec_of(const dcDeviceEncode_t& e) {
  using compression::Spec;
  auto refuse = [](const std::string& why) { fail(dcInvalidArgument, "DeepComm device encode: " + why); };
  if (e.datatype != dcFloat32 && e.datatype != dcFloat16 && e.datatype != dcBfloat16)
    refuse("datatype " + std::to_string(e.datatype) + ": float32, float16 or bfloat16 only");
  if (e.selection > DEEPCOMM_DEVICE_SELECT_TOPK_SAMPLED) refuse("selection " + std::to_string(e.selection));
  if (e.values > DEEPCOMM_DEVICE_VALUES_FLOAT32) refuse("values " + std::to_string(e.values));
  const bool q8 = e.values == DEEPCOMM_DEVICE_VALUES_Q8;
  if (e.selection == DEEPCOMM_DEVICE_SELECT_DENSE && !q8) refuse("a dense encode sends q8 values");
  if (q8 && (e.block < Spec::kMinBlock || e.block > Spec::kMaxBlock)) refuse("block of " + std::to_string(e.block));
  if (e.chunk_log2 < Spec::kMinChunkLog2 || e.chunk_log2 > Spec::kMaxChunkLog2)
    refuse("chunk of 2^" + std::to_string(e.chunk_log2) + " elements");
  if (e.count > UINT32_MAX) refuse(std::to_string(e.count) + " elements do not fit one message");
  if (e.selection != DEEPCOMM_DEVICE_SELECT_DENSE && e.count > 0 && (e.kept == 0 || e.kept > e.count))
    refuse("a top-k of " + std::to_string(e.kept) + " of " + std::to_string(e.count) + " elements");
  if (e.count > 0 && !e.input) refuse("null input");
  if (!e.message || !e.result) refuse("null message or result");
  Spec spec;
  spec.selection = e.selection == DEEPCOMM_DEVICE_SELECT_TOPK_EXACT     ? compression::Selection::topk_exact
                   : e.selection == DEEPCOMM_DEVICE_SELECT_TOPK_SAMPLED ? compression::Selection::topk_sampled
                                                                        : compression::Selection::dense;
  spec.q8 = q8;
  spec.rounding = e.stochastic ? compression::Rounding::stochastic : compression::Rounding::nearest;
  if (q8) spec.block = e.block;
  spec.huffman = e.huffman != 0;
  spec.error_feedback = e.residual != nullptr;
  spec.beta = e.beta;
  spec.chunk_log2 = e.chunk_log2;
  return spec;
}

inline uint64_t encode_kept_of(const dcDeviceEncode_t& e) {
  return e.selection == DEEPCOMM_DEVICE_SELECT_DENSE ? e.count : e.kept;
}

// The descriptor's members that say what to do: everything but the buffers and the seed. kept:
// a top-k's k (compression::kept_target of the spec's fraction and the count).
inline void describe_encode(const compression::Spec& spec, uint64_t kept, dcDeviceEncode_t& e) {
  using compression::Selection;
  e.stochastic = spec.q8 && spec.rounding == compression::Rounding::stochastic ? 1u : 0u;
  e.block = spec.q8 ? spec.block : 0;
  e.chunk_log2 = spec.chunk_log2;
  e.huffman = spec.huffman ? 1u : 0u;
  e.beta = spec.beta;
  e.selection = spec.selection == Selection::topk_exact     ? DEEPCOMM_DEVICE_SELECT_TOPK_EXACT
                : spec.selection == Selection::topk_sampled ? DEEPCOMM_DEVICE_SELECT_TOPK_SAMPLED
                                                            : DEEPCOMM_DEVICE_SELECT_DENSE;
  e.values = spec.q8 ? DEEPCOMM_DEVICE_VALUES_Q8 : DEEPCOMM_DEVICE_VALUES_FLOAT32;
  e.kept = spec.sparse() ? kept : 0;
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
  using namespace compression::gpu;
  const compression::Spec spec = encode_spec_of(e);
  if (spec.sparse())
    return layout_of(sparse_encode_args(spec, encode_kept_of(e), encode_elem_type_of(e), e.input, e.count, e.residual,
                                        e.seed, nullptr, e.message))
        .bytes;
  return layout_of(
             dense_encode_args(spec, encode_elem_type_of(e), e.input, e.count, e.residual, e.seed, nullptr, e.message))
      .bytes;
}

inline uint64_t decode_workspace_bytes_of(const dcDeviceDecode_t& d) {
  check_decode_descriptor(d);
  return compression::gpu::decode_workspace_bytes(d.count);
}

}  // namespace dc::device
