// Gives a freshly connected communicator its flat board (flat_collective.h) when all of its ranks
// share a host: rank 0 creates the segment (a sealed memfd) and passes it over its shm connections,
// the others map it, and all agree that everyone did. Every rank ends with a board, or none has one.
#pragma once

#include "src/core/communicator.h"

namespace dc {

// Call on every rank at the end of set-up (init, split, shrink), after the control channel started.
void attach_flat_board(dcComm* comm);

}  // namespace dc
