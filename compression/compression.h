// Gradient compression for the compressed all-reduce: what the executor includes.
//
//   Spec spec = parse_spec("topk:0.001,q8,huffman,ef");   // once (e.g. from the configuration)
//   Residual residual(count);                             // per buffer, kept across calls
//   std::vector<uint8_t> msg(max_message_bytes(spec, count));  // the worst case, also a receive's capacity
//   Encoder encoder;                                      // per thread (scratch)
//   size_t bytes = encoder.encode(spec, dcFloat32, grad, count, &residual, step, msg).bytes;
//   decode_accumulate({msg.data(), bytes}, {dcFloat32, sum, count});  // sum += decoded
//   PieceDecoder d({dcFloat32, sum, count}); d.consume(piece) ...; d.finish();  // as pieces arrive
//
// The wire format (wire_format.h, docs/compression.md) is chunked: after the header, chunk c
// covers elements [c << log2, (c + 1) << log2) (65536 by default) and decodes on its own
// (ChunkDecoder), so chunks can be split among threads.
#pragma once

#include "compression/codec_isa.h"
#include "compression/decoder.h"
#include "compression/encoder.h"
#include "compression/form/message_form.h"
#include "compression/form/spec.h"
#include "compression/piece_decoder.h"
#include "compression/residual.h"
