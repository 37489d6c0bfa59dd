#include "src/core/bootstrap/root_reply.h"

#include <algorithm>

#include "base/error.h"
#include "src/core/bootstrap/wire.h"

namespace dc {

namespace {

uint32_t read_u32(ByteSource& in) {
  uint8_t b[4];
  in.read(b, sizeof b);
  return wire::get_u32(b);
}

std::string read_text(ByteSource& in, const char* what) {
  const uint32_t length = read_u32(in);
  if (length > wire::kMaxMessageBytes)
    fail(dcRemoteError,
         std::string("bootstrap root sent an oversized ") + what + " (" + std::to_string(length) + " bytes)");
  std::string text(length, '\0');
  in.read(text.data(), length);
  return text;
}

std::vector<std::string> read_table(ByteSource& in, int nranks) {
  const uint32_t count = read_u32(in);
  if (count != static_cast<uint32_t>(nranks))
    fail(dcRemoteError,
         "bootstrap root sent " + std::to_string(count) + " blobs for " + std::to_string(nranks) + " ranks");
  std::vector<std::string> blobs(count);
  std::vector<uint64_t> lengths(count);
  uint64_t total = 0;
  for (uint32_t r = 0; r < count; ++r) {
    uint8_t b[8];
    in.read(b, sizeof b);
    lengths[r] = wire::get_u64(b);
    if (lengths[r] > wire::kMaxBlobBytes || lengths[r] > wire::kMaxTableBytes - total)
      fail(dcRemoteError, "bootstrap root sent an oversized blob for rank " + std::to_string(r));
    total += lengths[r];
  }
  // Grown as the bytes arrive: a root that claims more than it sends costs no more than it sent.
  constexpr uint64_t kStep = 1 << 20;
  for (uint32_t r = 0; r < count; ++r) {
    for (uint64_t done = 0; done < lengths[r];) {
      const uint64_t n = std::min(kStep, lengths[r] - done);
      blobs[r].resize(done + n);
      in.read(blobs[r].data() + done, n);
      done += n;
    }
  }
  return blobs;
}

}  // namespace

RootReply read_root_reply(ByteSource& in, int nranks) {
  uint8_t kind = 0;
  in.read(&kind, 1);
  RootReply reply;
  switch (static_cast<wire::ReplyKind>(kind)) {
    case wire::ReplyKind::Table:
      reply.kind = RootReply::Kind::Table;
      reply.blobs = read_table(in, nranks);
      return reply;
    case wire::ReplyKind::Error: {
      reply.kind = RootReply::Kind::Error;
      const uint32_t code = read_u32(in);
      const bool known = code > dcSuccess && code < dcNumResults && code != dcInProgress;
      reply.code = known ? static_cast<dcResult_t>(code) : dcRemoteError;
      reply.text = read_text(in, "error message");
      return reply;
    }
    case wire::ReplyKind::Status:
      reply.kind = RootReply::Kind::Status;
      reply.text = read_text(in, "status text");
      return reply;
  }
  fail(dcRemoteError, "bootstrap root sent an unknown reply (kind " + std::to_string(kind) + ")");
}

}  // namespace dc
