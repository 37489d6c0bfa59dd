// Registered shareable memory across processes, for single copy where cross-memory attach is
// forbidden. A rank registers memory that dcMemAlloc/ncclMemAlloc made (memfd-backed); the first
// rendezvous send from it to a peer passes the memfd over a Unix datagram socket (SCM_RIGHTS) and
// marks the RTS with the region's id; the receiver maps the region once and copies straight out of
// it. Plain malloc memory cannot be shared this way and keeps the other paths.
//
// The fd datagram is sent before the RTS is written on the stream socket, and a Unix socket queues
// a datagram on the receiver before sendmsg returns: a receiver that reads an RTS naming a region it
// does not know yet finds the datagram by draining its socket then, without waiting.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace dc {

// A registered region this rank offers to its peers.
struct ExportedRegion {
  uint64_t id = 0;
  const char* base = nullptr;  // start of the memfd mapping (may precede the registered range)
  size_t size = 0;             // of the whole mapping
  int fd = -1;                 // our own duplicate, closed when the registration ends
};

// A peer's region mapped into this process (read-only).
struct ImportedRegion {
  uint64_t remote_base = 0;  // the region's address in the peer
  size_t size = 0;
  const char* local = nullptr;
};

// One per shm transport (all of its connections share it). Runs on the engine thread only.
class ShmRegions {
 public:
  // Binds the datagram socket "@<address>.fd" (throws dc::Error).
  ShmRegions(const std::string& address, uint64_t session, int rank);
  ~ShmRegions();
  ShmRegions(const ShmRegions&) = delete;
  ShmRegions& operator=(const ShmRegions&) = delete;

  // Registers [addr, addr+size) if it lies inside shareable memory; returns its id, or 0.
  uint64_t export_region(const void* addr, size_t size);
  void unexport_region(uint64_t id);
  // The exported region holding [buf, buf+len), if any.
  const ExportedRegion* find_export(const void* buf, size_t len) const;
  // Passes region's fd to the peer whose transport address is peer_address. False if it could not.
  bool send_region(const ExportedRegion& region, const std::string& peer_address);

  // Peer `rank`'s region `id`, mapping it if its fd has arrived; nullptr if unknown.
  const ImportedRegion* find_import(int rank, uint64_t id);
  void drop_import(int rank, uint64_t id);
  // Unmaps everything imported from `rank` (its connection closed).
  void drop_imports_of(int rank);

 private:
  void drain_socket();

  uint64_t session_;
  int rank_;
  int socket_ = -1;
  uint64_t next_id_ = 1;
  std::map<uint64_t, ExportedRegion> exports_;
  std::map<std::pair<int, uint64_t>, ImportedRegion> imports_;
};

}  // namespace dc
