// libFuzzer target: what the rendezvous root and a rank read from each other after the handshake.
// The first byte chooses the side:
//   even: a rank reads the root's reply to a join of 1..8 ranks (root_reply.h): it must parse or
//         fail with dc::Error, and never allocate past wire.h's bounds;
//   odd:  the root takes a sequence of requests (29-byte headers, each join followed by up to 64
//         bytes of its blob) into its bookkeeping: every outcome must leave it consistent.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/error.h"
#include "src/core/bootstrap/rendezvous_state.h"
#include "src/core/bootstrap/root_reply.h"
#include "src/core/bootstrap/wire.h"

namespace {

class BufferSource : public dc::ByteSource {
 public:
  BufferSource(const uint8_t* data, size_t size) : data_(data), left_(size) {}
  void read(void* dst, size_t len) override {
    if (len > left_) dc::fail(dcSystemError, "end of input");
    std::memcpy(dst, data_, len);
    data_ += len;
    left_ -= len;
  }

 private:
  const uint8_t* data_;
  size_t left_;
};

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
  }
}

void read_reply(const uint8_t* data, size_t size, int nranks) {
  BufferSource source(data, size);
  try {
    dc::RootReply reply = dc::read_root_reply(source, nranks);
    if (reply.kind == dc::RootReply::Kind::Table) check(reply.blobs.size() == size_t(nranks), "table size");
    if (reply.kind == dc::RootReply::Kind::Error)
      check(reply.code != dcSuccess && reply.code != dcInProgress, "error code");
  } catch (const dc::Error&) {}
}

void feed_requests(const uint8_t* data, size_t size) {
  constexpr uint64_t kSession = 0x1122334455667788ull;
  dc::RendezvousState state(kSession);
  size_t at = 0, complete = 0;
  while (size - at >= dc::wire::kRequestBytes) {
    dc::wire::Request request;
    const bool ours = dc::wire::decode_request(data + at, &request);
    at += dc::wire::kRequestBytes;
    if (!ours) continue;
    if (request.kind == dc::wire::RequestKind::StatusQuery) {
      (void)state.progress();
      continue;
    }
    const size_t blob = std::min<uint64_t>({request.blob_bytes, uint64_t(64), uint64_t(size - at)});
    std::string rejection;
    const auto outcome = state.join(request, std::string(reinterpret_cast<const char*>(data + at), blob), &rejection);
    at += blob;
    if (outcome == dc::RendezvousState::Outcome::Rejected) check(!rejection.empty(), "a rejection says why");
    if (outcome == dc::RendezvousState::Outcome::Failed) check(state.failed(), "failure recorded");
    if (outcome == dc::RendezvousState::Outcome::Complete) ++complete;
  }
  check(complete <= 1, "a rendezvous completes once");
  (void)state.progress();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if (data[0] % 2 == 0) read_reply(data + 1, size - 1, 1 + (data[0] >> 1) % 8);
  else feed_requests(data + 1, size - 1);
  return 0;
}
