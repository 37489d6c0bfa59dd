// The flat board: one shared-memory segment per communicator whose ranks all share a host, through
// which small collectives skip the engine, the sockets and every thread hand-off. Each rank owns a
// slot: a posted-round counter, a history of the signatures of its recent collectives (every
// collective notes its signature there, flat or not, so a rank waiting on the board can tell a peer
// that called another operation from one that is late), and two data buffers used by alternate
// rounds. A round is: copy the input into the own buffer, post, wait until every rank posted, read
// the others' buffers. Two buffers suffice: nobody can post round k+2 (reusing round k's buffer)
// before everyone posted round k+1, which each rank does only after it finished reading round k.
//
// Waiting spins briefly (yielding the core), then sleeps on a futex in the segment; a rank that
// posts wakes the sleepers, and so does anything that fails the communicator locally.
//
// The segment is an unnamed, sealed memfd that rank 0 passes to the others over their shm
// connections (flat_setup.cpp): nothing is left in /dev/shm whenever a rank dies.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/memfd.h"

namespace dc {

class FlatBoard {
 public:
  static constexpr size_t kHistory = 256;  // signatures remembered per rank

  // Rank 0 creates the segment and passes fd() to the others, who open it (both throw dc::Error;
  // open checks the header rank 0 wrote).
  static std::unique_ptr<FlatBoard> create(int nranks, size_t slot_bytes);
  static std::unique_ptr<FlatBoard> open(UniqueFd fd, int nranks, size_t slot_bytes);
  // How long the segment of a board of nranks is.
  static size_t segment_bytes(int nranks, size_t slot_bytes);
  ~FlatBoard();
  FlatBoard(const FlatBoard&) = delete;
  FlatBoard& operator=(const FlatBoard&) = delete;

  int fd() const { return fd_.get(); }
  size_t slot_bytes() const { return slot_bytes_; }
  // Bytes of the shared segment mapped here (every rank of the host maps the same one).
  size_t held_bytes() const { return bytes_; }

  // Records that `rank` issued collective `seq` with `signature`.
  void note_signature(int rank, uint64_t seq, uint64_t signature);
  // The signature `rank` issued as collective `seq`, if it is still in its history.
  bool signature_of(int rank, uint64_t seq, uint64_t* signature) const;

  // Data buffer of `rank` for `round`.
  char* buffer(int rank, uint64_t round);
  // `rank` finished writing its buffer of `round`.
  void post(int rank, uint64_t round);
  bool posted(int rank, uint64_t round) const;

  // Polls ready() until it returns true (then true) or the deadline passes (then false).
  bool wait(const std::function<bool()>& ready, std::chrono::steady_clock::time_point deadline);
  // Wakes every rank sleeping on the board (they poll again).
  void wake_all();

 private:
  struct Header;
  struct Slot;
  FlatBoard(UniqueFd fd, void* base, size_t bytes, size_t slot_bytes);
  static size_t slot_stride(size_t slot_bytes);
  Header* header() const;
  Slot* slot(int rank) const;

  UniqueFd fd_;
  void* base_;
  size_t bytes_;
  size_t slot_bytes_;
};

}  // namespace dc
