// Steps of compressed plans: a message of a known number of elements but a run-time length, with
// its bytes in the plan's byte scratch (capacity: the spec's worst case for its elements) and its
// length in a slot. Internal to src/plan/.
#pragma once

#include <cstdint>
#include <optional>

#include "src/plan/compose.h"

namespace dc::plan_build {

struct Message {
  BufRef at;              // in Bytes
  uint64_t capacity = 0;  // the spec's worst case for `count` elements
  uint32_t slot = 0;      // its run-time length
  uint64_t count = 0;     // elements it carries
};

// Reserves bytes and a slot for a message of `count` elements of the request's spec.
Message new_message(BuildSpace& space, uint64_t count);

// Encodes `m.count` elements at src into m (with the residual at `residual` when the spec has ef).
Step encode(BufRef src, std::optional<BufRef> residual, const Message& m);
Step send_message(int peer, uint32_t tag, const Message& m);
Step recv_message(int peer, uint32_t tag, const Message& m);
// dst (m.count elements) += decode(m); = with overwrite.
Step decode(const Message& m, BufRef dst, bool overwrite);
// Receives a message of `staging.count` elements into staging, decoding it into dst as it arrives.
Step recv_decode(int peer, uint32_t tag, BufRef dst, const Message& staging, bool overwrite);

// Ring all-gather of one message per member: at ring step s member r receives the message of
// member r-1-s from r-1 and, but at the last step, forwards it to r+1 at the length it got; its
// own message (ready after own_ready) goes to r+1 first. counts[j]: the elements of member j's
// message (0: there is none). Step s uses tag phase + s. Per member: its message here and the step
// after which it is available (the own message's: own_ready).
struct GatheredMessages {
  std::vector<Message> message;
  std::vector<std::optional<uint32_t>> ready;
};
GatheredMessages ring_gather_messages(BuildSpace& space, uint64_t phase, const std::vector<uint64_t>& counts,
                                      const std::optional<Message>& own, std::optional<uint32_t> own_ready);

}  // namespace dc::plan_build
