// Wire format of the framed message channel shared by the TCP and shared-memory transports. Every
// frame starts with one fixed-size header; only Eager and Data frames carry a payload after it.
#pragma once

#include <cstdint>

#include "transports/transport.h"

namespace dc {

enum class FrameType : uint32_t {
  Eager = 1,     // tag, length; payload follows
  Rts = 2,       // rendezvous announce: tag, length, id = sender's op id, aux = sender's buffer
                 // address; flags: InRegion (shm: offset = id of the registered region holding it)
  Cts = 3,       // clear to send: id = sender's op id, aux = receiver's op id; flags: Rejected
  Data = 4,      // rendezvous payload: id = receiver's op id, offset, length; payload follows
  Credit = 5,    // returns eager credit: length = bytes
  Fin = 6,       // shm: the receiver copied the payload itself (id = sender's op id); flags: Failed
  Slot = 7,      // shm: chunk in a shared slot: id = receiver's op id, offset, length, aux = slot
  SlotFree = 8,  // shm: aux = slot the receiver has emptied
  RegionGone = 9,  // shm: the sender deregistered region aux; the receiver unmaps it
};

enum FrameFlags : uint32_t {
  kFrameRejected = 1,  // Cts: the posted receive is too small; the message is dropped
  kFrameFailed = 2,    // Fin: the receiver could not copy the payload
  kFrameMismatch = 4,  // Cts: the receiver called another operation (tag.check is its signature)
  kFrameInRegion = 8,  // Rts: the buffer lies in a registered region passed to the receiver
};

struct FrameHeader {
  FrameType type{};
  uint32_t flags = 0;
  Tag tag;
  uint64_t length = 0;
  uint64_t id = 0;
  uint64_t offset = 0;
  uint64_t aux = 0;
};
static_assert(sizeof(FrameHeader) == 72, "the frame header is part of the wire format");

// First bytes on every new stream, in both directions: the dialer's hello, then the acceptor's reply.
struct Hello {
  static constexpr uint64_t kMagic = 0x44434F4D4D484C4Full;  // "DCOMMHLO"
  uint64_t magic = kMagic;
  uint64_t session = 0;
  int32_t rank = 0;
  int32_t pid = 0;
  char extra[64] = {};  // transport-specific (shm: the name of the connection's segment)
};

}  // namespace dc
