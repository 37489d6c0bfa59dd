// Memory registration with a communicator (ncclCommRegister, ncclCommWindowRegister). Each of the
// communicator's transports registers the range through the contract's register_memory (RDMA
// transports pin it there); handles are tracked per communicator so that a wrong, foreign or
// twice-released handle is an error, and what is left is released with the communicator.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "src/core/communicator.h"

namespace dc {

struct Registration {
  dcComm* comm = nullptr;
  void* addr = nullptr;
  size_t size = 0;
  bool window = false;  // made by a window registration
  // A window's number (the same on every rank) and every rank's size of it (one_sided.h), and
  // where this process reaches each rank's window (window_peers.h: nullptr where it cannot).
  uint32_t window_number = 0;
  std::vector<uint64_t> window_sizes;
  std::vector<void*> window_addresses;
  std::shared_ptr<void> peer_mappings;  // unmaps the peers' windows with the registration
  std::vector<MemoryRegistration> per_transport;
};

Registration* register_memory(dcComm* comm, void* addr, size_t size, bool window);
// Throws dc::Error(dcInvalidArgument) unless handle is a live registration of comm of that kind.
void deregister_memory(dcComm* comm, Registration* handle, bool window);
// Releases every registration of comm (destroy).
void release_registrations(dcComm* comm);

}  // namespace dc
