// The UCX transport's messages: one UCP active message id, and this header on every message. The
// payload of a Message is the AM's data (eager, or rendezvous left in UCX until a receive takes it);
// the other types carry no payload.
#pragma once

#include <cstdint>

#include "transports/transport.h"

namespace dc {

constexpr unsigned kUcxAmId = 0x4443;  // "DC"

enum class UcxType : uint32_t {
  Message = 1,       // tag, length; id: sender's rendezvous id (0 for eager)
  Credit = 2,        // id: eager bytes the receiver consumed
  Reject = 3,        // id: the refused rendezvous; tag.check: receiver's signature; flags below
  RejectAck = 4,     // id: the refused rendezvous; the receiver may now drop it (its send completes)
  FlushRequest = 5,  // id: the sender's flush; answered by FlushAck once what came before arrived
  FlushAck = 6,      // id: the flush answered
};

enum UcxFlags : uint32_t {
  kUcxMismatch = 1,   // Reject: the receiver called another operation
  kUcxCancelled = 2,  // Reject: the receiver's operation was cancelled (the send ends, nothing sent)
};

struct UcxHeader {
  UcxType type{};
  uint32_t flags = 0;
  uint64_t conn = 0;  // the receiving connection's id in its process (one worker serves them all)
  Tag tag;
  uint64_t length = 0;
  uint64_t id = 0;
};
static_assert(sizeof(UcxHeader) == 64, "the UCX message header is part of the wire format");

}  // namespace dc
