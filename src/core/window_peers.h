// Windows a rank can load and store directly: a window that lives in dcMemAlloc/ncclMemAlloc memory
// (a sealed memfd, base/shareable_memory.h) is handed at registration to every peer that reaches
// this rank over shared memory, which maps it. A put to a mapped window is then a store by the
// origin followed by a signal, and the window pointer getters return the mapped address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/core/communicator.h"
#include "src/core/registration.h"

namespace dc {

// What a rank tells the others about its window when it registers one.
struct WindowEntry {
  uint32_t number = 0;  // the window's number in registration order
  uint32_t shareable = 0;
  uint64_t bytes = 0;
  uint64_t region_bytes = 0;   // the dcMemAlloc region holding it, when shareable
  uint64_t region_offset = 0;  // where the window starts in it
};

// The ranks whose mapped windows this rank may load and store (NCCL's LSA team): [first, first +
// size) = this host's ranks when they are consecutive, every host has as many, and they reach each
// other over shared-memory connections; otherwise the rank alone.
struct LoadStoreTeam {
  int first = 0;
  int size = 1;
};
LoadStoreTeam load_store_team(const dcComm* comm);

// This rank's entry for window (its number already set).
WindowEntry describe_window(const Registration& window);

// Passes this rank's region to its shared-memory peers and maps theirs, bounded by the connect
// timeout; fills window->window_addresses (this rank's own buffer, a peer's mapped window, or
// nullptr where there is none) and keeps the mappings with the window.
void map_peer_windows(dcComm* comm, Registration* window, const std::vector<WindowEntry>& entries);

}  // namespace dc
