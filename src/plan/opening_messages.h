// Which of the signature ring's messages (src/exec/operation.cpp) a collective needs not send.
// First, a message between a rank and a ring neighbour that opens both ranks' plans: the sender's
// step and the receiver's step each wait on nothing, so the message is sent and awaited as soon as
// the operation starts, whatever else either rank waits on, and its tag carries the check. Second,
// the ring's closing edge (rank 0 to rank n-1) where the last rank's plans receive: the rest of
// the ring is a chain through every rank, so neighbours that agree are all ranks agreeing, and a
// plan that receives cannot end without a peer's message of the same operation, checked too.
#pragma once

#include "src/plan/plan.h"

namespace dc {

struct OpeningMessages {
  bool to_previous = false;  // request.rank's check to request.rank - 1 (mod nranks) needs no message
  bool from_next = false;    // the check from request.rank + 1 (mod nranks) needs no message
};

// Both ranks of an edge must decide alike, and each builds only its own plan: so this builds the
// plans of the rank and its two neighbours, in place and out of place (ranks may differ in that),
// and an edge counts only when it opens all of them. Operations above kOpeningMessagesMaxBytes
// (count × element size) are not looked at (the builds would cost more than the 8-byte message
// saves); neither are plans that cannot be built for a neighbour, nor point-to-point requests
// (the ring checks collectives only).
OpeningMessages ring_opening_messages(PlanRequest request);

inline constexpr uint64_t kOpeningMessagesMaxBytes = 1 << 20;

}  // namespace dc
