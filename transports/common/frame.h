// Wire format of the framed message channel shared by the TCP and shared-memory transports. Every
// frame starts with one fixed-size header; only Eager and Data frames carry a payload after it.
#pragma once

#include <cstdint>

#include "transports/transport.h"

namespace dc {

enum class FrameType : uint32_t {
  Eager = 1,       // tag, length; payload follows
  Rts = 2,         // rendezvous announce: tag, length, id = sender's op id, aux = sender's buffer
                   // address; flags: InRegion (shm: offset = id of the registered region holding it)
  Cts = 3,         // clear to send: id = sender's op id, aux = receiver's op id; flags: Rejected
  Data = 4,        // rendezvous payload: id = receiver's op id, offset, length; payload follows
  Credit = 5,      // returns eager credit: length = bytes
  Fin = 6,         // shm: the receiver copied the payload itself (id = sender's op id); flags: Failed
  Slot = 7,        // shm: chunk in a shared slot: id = receiver's op id, offset, length, aux = slot
  SlotFree = 8,    // shm: aux = slot the receiver has emptied
  RegionGone = 9,  // shm: the sender deregistered region aux; the receiver unmaps it
  Memory = 10,     // shm: a sealed memfd rides with this frame (SCM_RIGHTS): aux = MemoryKind,
                   // id = its key, length = its size, offset = (Region) its address in the sender
};

// What a Memory frame's descriptor is.
enum class MemoryKind : uint64_t {
  Region = 1,   // a registered dcMemAlloc region (id = region id), read by the receiver in place
  Segment = 2,  // the sender's slots of the copy-through path (one per direction, id = 0)
  Board = 3,    // a communicator's flat board (id = communicator id), taken by receive_memory
};

enum FrameFlags : uint32_t {
  kFrameRejected = 1,    // Cts: the posted receive is too small; the message is dropped
  kFrameFailed = 2,      // Fin: the receiver could not copy the payload
  kFrameMismatch = 4,    // Cts: the receiver called another operation (tag.check is its signature)
  kFrameInRegion = 8,    // Rts: the buffer lies in a registered region passed to the receiver
  kFrameCancelled = 16,  // Cts: the receiver's operation failed and was cancelled; no payload follows
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

// After the handshake (handshake.h) proved the secret, in both directions: the dialer's hello, then
// the acceptor's reply. The token is the sender's transport's, from its address in its card: it
// binds the connection to the card its rank presented at the rendezvous.
struct Hello {
  static constexpr uint32_t kMagic = 0x4f4c4844;  // "DHLO" read as little-endian
  uint32_t magic = kMagic;
  int32_t rank = 0;
  uint8_t token[16] = {};
};
static_assert(sizeof(Hello) == 24, "the hello is part of the wire format");

// Whether a hello that reached rank `acceptor` can be a dialer's: ours, from a lower rank.
inline bool hello_claims_a_dialer(const Hello& hello, int acceptor) {
  return hello.magic == Hello::kMagic && hello.rank >= 0 && hello.rank < acceptor;
}

}  // namespace dc
