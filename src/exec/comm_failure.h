// Failure of a communicator, so that no rank hangs silently. The first failure (a peer's death seen
// as its connection closing, a mismatch, a timeout, an abort or revoke, or a peer's notice of one)
// marks the communicator failed: its queued and running operations end with that error (except
// collectives the failing rank had finished), later ones fail at once, and every other rank is told why through the communicator's control channel. Each rank keeps a receive
// posted from every peer on that channel, which doubles as death detection: it fails the moment
// the peer's connection closes, whatever the rank is doing. Engine thread only.
#pragma once

#include <vector>

#include "base/error.h"
#include "src/exec/exec_comm.h"

namespace dc {

// Collectives numbered below `first_collective` are spared: the failing rank finished them, so
// their data is sent and they can still complete here (a slow rank may still be in one when a faster
// rank fails a later call). They end by themselves, by their own errors, or by the deadline.
void fail_comm(ExecComm* comm, const Status& status, uint64_t first_collective = 0);
// fail_comm from a caller thread (timeouts, revoke, abort), waiting for the engine (bounded). It
// ends every operation of the communicator, also those an earlier failure spared: this is their
// deadline.
void fail_comm_from_caller(ExecComm* comm, const Status& status);

// Posts the control receives of a new communicator.
void start_control_channel(ExecComm* comm);
class Operation;
// A new operation that waits for a peer that already destroyed the communicator fails it.
void check_departed_peers(ExecComm* comm, const Operation& op);

// Ranks of comm seen gone (connection closed without an orderly leave), in the order seen.
std::vector<int> gone_peers(ExecComm* comm);

// Tells the other ranks this one destroys its communicator in order, so that its connections
// closing afterwards is not taken for a death. Sent before the final flush.
void announce_leave(ExecComm* comm);
// Detaches them, and the one-sided channel's, before the communicator is freed (their receives
// stay posted until the connections close, and then find no communicator).
void stop_control_channel(ExecComm* comm);

}  // namespace dc
