// Decoding a message as its pieces arrive in order (e.g. the transport's 128 KiB receive pieces):
// the header is gathered first, then each chunk is checked and added to the destination as soon
// as its last byte is in. A chunk that lies whole inside one piece is decoded in place; one split
// across pieces is gathered (at most one chunk's bytes are held).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compression/decoder.h"

namespace dc::compression {

class PieceDecoder {
 public:
  explicit PieceDecoder(const Target& dst, Isa isa = Isa::best);

  // The next bytes of the message, any size. Throws dc::Error(dcInvalidArgument) on a bad message
  // (corrupted, or longer than its header says); after that every call throws the same error.
  void consume(std::span<const uint8_t> piece);
  // Whether the whole message arrived (and was added).
  bool done() const { return header_ && next_chunk_ == header_->chunk_count(); }
  // After the last piece: throws when the message is incomplete (truncated).
  void finish() const;
  uint64_t bytes_received() const { return received_; }
  double accumulate_seconds() const { return chunks_.accumulate_seconds(); }

 private:
  void take(std::span<const uint8_t>& piece);

  Target dst_;
  Isa isa_;
  ChunkDecoder chunks_;
  std::optional<MessageHeader> header_;
  std::vector<uint8_t> pending_;  // the header, or the current chunk, gathered so far
  uint32_t next_chunk_ = 0;
  uint64_t received_ = 0;
  std::string error_;
};

}  // namespace dc::compression
