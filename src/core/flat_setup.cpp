#include "src/core/flat_setup.h"

#include "src/core/issue.h"
#include "src/base/log.h"
#include "src/exec/flat_board.h"

namespace dc {

namespace {

void map_board_everywhere(dcComm* comm) {
  const size_t slot_bytes = comm->config.flat_bytes;
  if (comm->exec.nranks < 2 || slot_bytes == 0 || comm->cluster->nhosts() != 1 || !comm->cluster->shared_memory())
    return;
  std::unique_ptr<FlatBoard> board;
  if (comm->exec.rank == 0) {
    try {
      board = FlatBoard::create(comm->exec.id, comm->exec.nranks, slot_bytes);
    } catch (const Error& e) {
      DC_INFO("%s; small collectives use the engine", e.what());
    }
  }
  if (!agree_min(comm, comm->exec.rank != 0 || board)) return;
  if (comm->exec.rank != 0) {
    try {
      board = FlatBoard::open(comm->exec.id, comm->exec.nranks, slot_bytes);
    } catch (const Error& e) {
      DC_INFO("%s; small collectives use the engine", e.what());
    }
  }
  const bool everyone = agree_min(comm, board != nullptr);
  if (board) board->unlink();
  if (everyone) comm->exec.board = std::move(board);
}

}  // namespace

void attach_flat_board(dcComm* comm) {
  try {
    map_board_everywhere(comm);
  } catch (const Error& e) {
    // The communicator failed meanwhile; its next call reports why, so a missing board is moot.
    DC_INFO("comm %016llx: no flat board: %s", static_cast<unsigned long long>(comm->exec.id), e.what());
  }
}

}  // namespace dc
