// One-sided operations of the native API (dcPutSignal, dcSignal, dcWaitSignal) and the collective
// side of window registration. A communicator's one-sided channel (src/exec/rma_channel.h) starts
// with its first window or one-sided call. Registering a window all-gathers its number and every
// rank's size, so a put past the end of a peer's window is refused here, before anything is sent.
// Every call checks all of its arguments first and touches nothing when one is bad.
#pragma once

#include <cstddef>
#include <vector>

#include "src/core/communicator.h"
#include "src/core/registration.h"
#include "src/exec/rma_channel.h"

namespace dc {

// After a window's registration on this rank (every rank registers its windows in the same order):
// numbers it, learns every rank's size and lets the peers put into it. Throws when the ranks
// disagree on the number (they registered in different orders) or the exchange fails.
void share_window(dcComm* comm, Registration* window);
// Before a window's deregistration: nothing lands in it any more.
void withdraw_window(dcComm* comm, const Registration& window);

// A live window of comm; throws dc::Error(dcInvalidArgument) otherwise.
Registration* checked_window(dcComm* comm, dcWindow_t win);

void put_signal(dcComm* comm, const void* buf, size_t count, dcDataType_t datatype, int peer, Registration* window,
                size_t offset, int signal, int context);
void signal_peer(dcComm* comm, int peer, int signal, int context);
void wait_signals(dcComm* comm, const std::vector<SignalWait>& waits);
// Where this process can load and store peer's window at offset (window_peers.h); throws
// dc::Error(dcInvalidUsage) where it cannot, dcInvalidArgument for an offset outside the window.
void* window_address(dcComm* comm, Registration* window, size_t offset, int peer);

}  // namespace dc
