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
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace dc {

class FlatBoard {
 public:
  static constexpr size_t kHistory = 256;  // signatures remembered per rank

  // Rank 0 creates the segment "/dc-<comm id>-board"; the others open it once it exists (both throw
  // dc::Error). unlink() removes the name once every rank mapped it.
  static std::unique_ptr<FlatBoard> create(uint64_t comm_id, int nranks, size_t slot_bytes);
  static std::unique_ptr<FlatBoard> open(uint64_t comm_id, int nranks, size_t slot_bytes);
  ~FlatBoard();
  FlatBoard(const FlatBoard&) = delete;
  FlatBoard& operator=(const FlatBoard&) = delete;

  void unlink();
  size_t slot_bytes() const { return slot_bytes_; }

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
  FlatBoard(std::string name, void* base, size_t bytes, int nranks, size_t slot_bytes);
  static size_t slot_stride(size_t slot_bytes);
  static size_t segment_bytes(int nranks, size_t slot_bytes);
  Header* header() const;
  Slot* slot(int rank) const;

  std::string name_;
  void* base_;
  size_t bytes_;
  int nranks_;
  size_t slot_bytes_;
  bool linked_ = true;
};

}  // namespace dc
