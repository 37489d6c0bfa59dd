// Timed ping-pongs between two ranks of a communicator: for each size, one untimed round (warm-up:
// connections, buffers), then `reps` timed round trips; a message's one-way time is half the median
// round trip. The leader drives: before each size it sends the follower an 8-byte control message
// (the size, or 0: done), so both always agree on what comes next. It stops early (sends 0) when
// the next size would end past its time budget (counted from when its buffer is ready), estimated
// from the last size's time; a size begun is finished. Every receive waits at most the communicator's deadline (DEEPCOMM_TIMEOUT), and
// blocks in the progress engine, never spinning.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "deepcomm/deepcomm.h"
#include "tools/calibrate/alpha_beta_fit.h"

namespace dc::calibrate {

struct PingPongPlan {
  std::vector<size_t> sizes;  // ascending
  int reps = 5;
  std::chrono::steady_clock::duration budget;
};

// Called by both ranks of the pair (and only by them). The leader returns one point per size it
// measured; the follower returns none. Throws dc::Error with the communicator's message when a
// send or receive fails.
std::vector<FitPoint> ping_pong(dcComm_t comm, int self, int leader, int follower, const PingPongPlan& plan);

}  // namespace dc::calibrate
