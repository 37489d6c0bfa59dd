// Decoding compressed messages and adding them into a float32, float16 or bfloat16 region: a whole
// message at once, or chunk by chunk (each chunk decodes on its own once the header is known, so
// chunks can go to several threads, or be decoded as the pieces of a message arrive: see
// piece_decoder.h). Every check fails with dc::Error(dcInvalidArgument) saying what is wrong.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compression/codec_isa.h"
#include "compression/form/message_form.h"
#include "compression/gpu/decode_fault.h"
#include "compression/huffman_table.h"
#include "deepcomm/deepcomm.h"

namespace dc::compression {

// Where decoded values are added: count elements of type (dcFloat32, dcFloat16, dcBfloat16).
// With overwrite, decoded values replace the elements instead (each chunk's elements are zeroed
// once the chunk passed its checks, then added to).
struct Target {
  dcDataType_t type;
  void* data;
  uint64_t count;
  bool overwrite = false;
};

// A checked header: the message's form, code tables and chunk table. Immutable, so threads
// decoding different chunks can share it.
class MessageHeader {
 public:
  struct ChunkInfo {
    size_t byte_begin, byte_end;  // in the message
    uint64_t elem_begin;
    uint32_t elems;
    uint32_t crc;
  };

  // Bytes the header takes, read from the first wire::kFixedHeaderBytes of a message (0 when
  // `prefix` is shorter). Checks the fixed fields.
  static size_t header_bytes(std::span<const uint8_t> prefix);
  // Checks and parses the first header_bytes() bytes of a message (exactly those).
  static MessageHeader parse(std::span<const uint8_t> header, Isa isa = Isa::best);

  uint64_t count() const { return count_; }
  size_t header_size() const { return header_bytes_; }
  size_t message_bytes() const { return message_bytes_; }
  uint32_t chunk_count() const { return uint32_t(chunk_ends_.size()); }
  ChunkInfo chunk(uint32_t i) const;
  const MessageForm& form() const { return form_; }
  bool nonfinite() const { return nonfinite_; }
  bool stochastic() const { return stochastic_; }
  const HuffmanTable& value_table() const { return value_table_; }
  const HuffmanTable& gap_table() const { return gap_table_; }

 private:
  MessageForm form_;
  bool nonfinite_ = false, stochastic_ = false;
  uint64_t count_ = 0;
  size_t header_bytes_ = 0, message_bytes_ = 0;
  std::vector<uint32_t> chunk_ends_, chunk_crcs_;
  HuffmanTable value_table_, gap_table_;
};

// Decodes single chunks; holds scratch memory, so one per thread.
class ChunkDecoder {
 public:
  explicit ChunkDecoder(Isa isa = Isa::best);

  // Checks chunk i's checksum (unless `checksum_verified`) and structure, then adds its values to
  // its elements of dst (dst.count must be the message's). `bytes`: exactly the chunk's bytes.
  // On an error dst is untouched.
  void decode_accumulate(const MessageHeader& header, uint32_t i, std::span<const uint8_t> bytes, const Target& dst,
                         bool checksum_verified = false);
  // Time spent adding (or writing) decoded values into targets so far; the rest of a decode is
  // checking and unpacking.
  double accumulate_seconds() const { return accumulate_seconds_; }

 private:
  const uint8_t* huffman_symbols(const MessageHeader& h, uint32_t i, std::span<const uint8_t> section, size_t count);
  void decode_sparse_section(const MessageHeader& h, uint32_t i, std::span<const uint8_t> section, size_t m,
                             uint32_t elems);

  const CodecKernels& kernels_;
  std::vector<uint8_t> symbols_;
  std::vector<float> scales_;
  std::vector<uint32_t> offsets_;
  std::vector<float> values_;
  double accumulate_seconds_ = 0;
};

// The message of the dc::Error(dcInvalidArgument) that refuses a message for `error`: this
// decoder's, and the GPU decoder's (compression/gpu/decode.h), so both say the same.
std::string decode_error_message(const gpu::DecodeError& error);

// Checks that dst fits a message of this header (type, data, count).
void check_target(const MessageHeader& header, const Target& dst);

// A whole message: checks the header and every chunk's checksum before touching dst, then adds.
// accumulate_seconds (optional) gets the time spent adding into dst.
void decode_accumulate(std::span<const uint8_t> message, const Target& dst, Isa isa = Isa::best,
                       double* accumulate_seconds = nullptr);

}  // namespace dc::compression
