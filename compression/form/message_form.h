// The shape of one message (what its header flags say) and the most bytes it can take: the
// encoder's capacity requirement and the decoder's sanity limit per chunk.
#pragma once

#include <cstdint>

#include "compression/form/spec.h"
#include "compression/form/wire_format.h"

namespace dc::compression {

struct MessageForm {
  bool sparse = false;
  bool q8 = false;
  bool huffman = false;
  uint32_t block = 0;  // q8 only
  uint32_t chunk_log2 = Spec::kDefaultChunkLog2;
};

// Largest encoding of a table of `alphabet` code lengths, in bytes.
using wire::max_table_bytes;

uint64_t max_chunk_bytes(const MessageForm& form, uint64_t elements);
uint64_t max_tables_bytes(const MessageForm& form);
uint64_t max_message_bytes(const MessageForm& form, uint64_t count);

// The largest message `spec` makes of `count` elements (for auto: of either choice). Throws
// dc::Error(dcInvalidArgument) when count or that size does not fit one message (u32 offsets).
uint64_t max_message_bytes(const Spec& spec, uint64_t count);

// The bytes a message of `count` gradient elements is expected to take: what the planner prices a
// compressed transfer with. From the ratios measured on real gradients (docs/compression.md):
// entropy-coded q8 values take about 4.5 bits, a kept element of a top-k about 9 + log2(1/F)
// bits with Huffman; auto is priced as its sparse choice. Never above max_message_bytes.
uint64_t expected_message_bytes(const Spec& spec, uint64_t count);

}  // namespace dc::compression
