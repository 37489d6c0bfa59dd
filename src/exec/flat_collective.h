// Small collectives of a communicator whose ranks share one host, run by the calling thread over the
// flat board (flat_board.h) instead of a plan on the engine: one round trip through shared memory,
// no socket, no thread hand-off. Which collectives go this way is a function of the signature
// alone (flat_eligible), so every rank takes the same path for the same call; a rank that called
// something else is seen in the board's signature history and fails the communicator with a
// message naming both calls. Reductions combine the ranks' inputs in rank order, so every rank gets
// bitwise the same result; an all-reduce of 16 KiB or more takes a second board round in which each
// rank reduces one block and then copies every rank's block out.
#pragma once

#include <cstdint>

#include "src/exec/exec_comm.h"
#include "src/exec/operation.h"

namespace dc {

struct FlatOp {
  ExecComm* comm = nullptr;
  OpArgs args;
  uint64_t seq = 0;  // collective sequence number
  uint64_t signature = 0;
  uint64_t round = 0;  // the board round it starts at (the communicator's count of rounds before)
};

// Whether the collective goes over comm's flat board (false when comm has none).
bool flat_eligible(const ExecComm* comm, const OpArgs& args);

// Board rounds the collective takes (all-reduces of 16 KiB and more take two).
uint64_t flat_rounds(const ExecComm* comm, const OpArgs& args);
// Copies this rank's input to the board and posts it (never blocks).
void flat_post(const FlatOp& op);
// Waits until every rank posted, then writes this rank's output. On a mismatch, a peer that left,
// the deadline or a failure of the communicator it fails the communicator (the other ranks are
// told) and throws dc::Error.
void flat_finish(const FlatOp& op);

}  // namespace dc
