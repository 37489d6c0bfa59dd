#include "compression/form/message_form.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "base/error.h"
#include "compression/form/wire_format.h"

namespace dc::compression {
namespace {

// The flag bits of a form: the bounds are wire_format.h's, which the GPU decoder checks with too.
uint8_t flags_of(const MessageForm& f) {
  return (f.sparse ? wire::kSparse : 0) | (f.q8 ? wire::kQ8 : 0) | (f.huffman ? wire::kHuffman : 0);
}

}  // namespace

uint64_t max_chunk_bytes(const MessageForm& f, uint64_t elements) {
  return wire::max_chunk_bytes(flags_of(f), f.block, f.chunk_log2, elements);
}

uint64_t max_tables_bytes(const MessageForm& f) { return wire::max_tables_bytes(flags_of(f)); }

uint64_t max_message_bytes(const MessageForm& f, uint64_t count) {
  const uint64_t chunk = uint64_t(1) << f.chunk_log2;
  const uint64_t full = count >> f.chunk_log2, rest = count & (chunk - 1);
  const uint64_t chunks = full + (rest != 0);
  return wire::kFixedHeaderBytes + max_tables_bytes(f) + wire::kChunkEntryBytes * chunks +
         full * max_chunk_bytes(f, chunk) + (rest ? max_chunk_bytes(f, rest) : 0);
}

uint64_t max_message_bytes(const Spec& spec, uint64_t count) {
  constexpr uint64_t kLimit = std::numeric_limits<uint32_t>::max();
  if (count > kLimit)
    fail(dcInvalidArgument, "a compressed message holds at most " + std::to_string(kLimit) + " elements, not " +
                                std::to_string(count) + ": split the buffer");
  MessageForm form{spec.sparse(), spec.q8, spec.huffman, spec.block, spec.chunk_log2};
  uint64_t bytes = max_message_bytes(form, count);
  if (spec.selection == Selection::automatic) {
    form.sparse = true;
    bytes = std::max(bytes, max_message_bytes(form, count));
  }
  if (bytes > kLimit)
    fail(dcInvalidArgument, "compressing " + std::to_string(count) + " elements with '" + spec.to_string() +
                                "' may need " + std::to_string(bytes) +
                                " bytes, beyond one message's 4 GiB: split the buffer");
  return bytes;
}

uint64_t expected_message_bytes(const Spec& spec, uint64_t count) {
  if (count == 0) return 0;
  const uint64_t chunks = wire::div_ceil(count, uint64_t(1) << spec.chunk_log2);
  const uint64_t overhead = wire::kFixedHeaderBytes + wire::kChunkEntryBytes * chunks + (spec.huffman ? 50 : 0);
  const bool sparse = spec.sparse() || spec.selection == Selection::automatic;
  const double fraction =
      spec.selection == Selection::automatic && spec.fraction == 0 ? Spec::kDefaultAutoFraction : spec.fraction;
  double bits = 0;
  if (!sparse) {
    bits = double(count) * (spec.huffman ? 4.5 : 8.0) + 32.0 * wire::div_ceil(count, spec.block);
  } else {
    const double kept = double(kept_target(fraction, count));
    const double value_bits = spec.q8 ? (spec.huffman ? 6.0 : 8.0) : 32.0;
    const double index_bits = spec.huffman ? 3.0 + std::log2(1.0 / fraction) : 32.0;
    bits = kept * (value_bits + index_bits) + (spec.q8 ? 32.0 * std::ceil(kept / spec.block) : 0.0) +
           8.0 * 5 * chunks;  // kind byte and kept count per chunk
  }
  const uint64_t expected = overhead + uint64_t(std::ceil(bits / 8));
  const MessageForm form{spec.sparse(), spec.q8, spec.huffman, spec.block, spec.chunk_log2};
  return std::min(expected, max_message_bytes(form, count));
}

}  // namespace dc::compression
