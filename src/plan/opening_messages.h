// Which messages between a rank and its ring neighbours open both ranks' plans: the sender's step
// and the receiver's step each wait on nothing, so the message is sent and awaited as soon as the
// operation starts, whatever else either rank waits on. The signature ring (src/exec/operation.cpp)
// leaves its own message out on such an edge: the plan's message carries the check in its tag.
#pragma once

#include "src/plan/plan.h"

namespace dc {

struct OpeningMessages {
  bool to_previous = false;  // request.rank sends to request.rank - 1 (mod nranks)
  bool from_next = false;    // request.rank + 1 (mod nranks) sends to request.rank
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
