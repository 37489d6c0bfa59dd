#include "compression/piece_decoder.h"

#include <algorithm>

#include "base/error.h"
#include "compression/form/wire_format.h"

namespace dc::compression {

PieceDecoder::PieceDecoder(const Target& dst, Isa isa) : dst_(dst), isa_(isa), chunks_(isa) {}

void PieceDecoder::consume(std::span<const uint8_t> piece) {
  if (!error_.empty()) fail(dcInvalidArgument, error_);
  try {
    while (!piece.empty()) take(piece);
  } catch (const Error& e) {
    error_ = e.what();
    throw;
  }
}

// Consumes a prefix of `piece`: header bytes, or bytes of the next chunk.
void PieceDecoder::take(std::span<const uint8_t>& piece) {
  auto gather = [&](size_t want) {
    const size_t n = std::min(want - pending_.size(), piece.size());
    pending_.insert(pending_.end(), piece.begin(), piece.begin() + n);
    piece = piece.subspan(n);
    received_ += n;
    return pending_.size() == want;
  };
  if (!header_) {
    if (!gather(std::max(wire::kFixedHeaderBytes, MessageHeader::header_bytes(pending_)))) return;
    const size_t h = MessageHeader::header_bytes(pending_);
    if (pending_.size() < h) return;  // the fixed part just arrived; the tables follow
    header_ = MessageHeader::parse(pending_, isa_);
    check_target(*header_, dst_);
    pending_.clear();
    return;
  }
  if (done())
    fail(dcInvalidArgument, "compressed message: oversized: more than the " + std::to_string(header_->message_bytes()) +
                                " bytes its header says");
  const MessageHeader::ChunkInfo c = header_->chunk(next_chunk_);
  const size_t size = c.byte_end - c.byte_begin;
  if (pending_.empty() && piece.size() >= size) {
    chunks_.decode_accumulate(*header_, next_chunk_, piece.first(size), dst_);
    piece = piece.subspan(size);
    received_ += size;
  } else {
    if (!gather(size)) return;
    chunks_.decode_accumulate(*header_, next_chunk_, pending_, dst_);
    pending_.clear();
  }
  ++next_chunk_;
}

void PieceDecoder::finish() const {
  if (!error_.empty()) fail(dcInvalidArgument, error_);
  if (!done()) {
    const std::string expected = header_ ? std::to_string(header_->message_bytes()) : "a header's worth of";
    fail(dcInvalidArgument, "compressed message: truncated: " + std::to_string(received_) + " bytes of " + expected);
  }
}

}  // namespace dc::compression
