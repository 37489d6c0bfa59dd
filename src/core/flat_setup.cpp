#include "src/core/flat_setup.h"

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "base/log.h"
#include "src/core/issue.h"
#include "src/exec/engine.h"
#include "src/exec/engine_call.h"
#include "src/exec/flat_board.h"

namespace dc {

namespace {

// Rank 0 hands the board's memfd to every peer over their shm connection, keyed by the
// communicator id. False unless every connection took it.
bool pass_board(dcComm* comm, const FlatBoard& board, size_t bytes) {
  auto links = comm->exec.links;
  std::vector<int> index = comm->exec.link_index;
  const uint64_t key = comm->exec.id;
  const int fd = board.fd();
  return call_on_engine(
      [links, index, key, fd, bytes] {
        bool all = true;
        for (size_t r = 1; r < index.size(); ++r) all = links->peers[index[r]]->pass_memory(key, fd, bytes) && all;
        return all;
      },
      comm->config.connect_timeout_ms, "passing the flat board");
}

// The board's memfd from rank 0 (waiting for it, bounded), or an empty descriptor.
UniqueFd receive_board(dcComm* comm, size_t bytes) {
  struct Arrival {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    bool abandoned = false;
    int fd = -1;
  };
  auto arrival = std::make_shared<Arrival>();
  auto links = comm->exec.links;
  const int from = comm->exec.link_index[0];
  const uint64_t key = comm->exec.id;
  Engine::instance().post([links, from, key, bytes, arrival] {
    links->peers[from]->receive_memory(key, bytes, [arrival](int fd) {
      std::lock_guard<std::mutex> lock(arrival->mutex);
      if (arrival->abandoned) {
        UniqueFd unwanted(fd);
        return;
      }
      arrival->fd = fd;
      arrival->done = true;
      arrival->cv.notify_all();
    });
  });
  Engine::Waiting waiting(Engine::instance());
  std::unique_lock<std::mutex> lock(arrival->mutex);
  if (!arrival->cv.wait_for(lock, std::chrono::milliseconds(comm->config.connect_timeout_ms),
                            [&] { return arrival->done; })) {
    arrival->abandoned = true;
    return UniqueFd();
  }
  return UniqueFd(arrival->fd);
}

void map_board_everywhere(dcComm* comm) {
  const size_t slot_bytes = comm->config.flat_bytes;
  const int nranks = comm->exec.nranks;
  if (nranks < 2 || slot_bytes == 0 || comm->cluster->nhosts() != 1 || !comm->cluster->shared_memory()) return;
  const size_t bytes = FlatBoard::segment_bytes(nranks, slot_bytes);
  std::unique_ptr<FlatBoard> board;
  bool passed = false;
  if (comm->exec.rank == 0) {
    try {
      board = FlatBoard::create(nranks, slot_bytes);
    } catch (const Error& e) {
      DC_INFO("%s; small collectives use the engine", e.what());
    }
    passed = board && pass_board(comm, *board, bytes);
  }
  if (!agree_min(comm, comm->exec.rank != 0 || passed)) return;
  if (comm->exec.rank != 0) {
    UniqueFd fd = receive_board(comm, bytes);
    try {
      if (fd) board = FlatBoard::open(std::move(fd), nranks, slot_bytes);
    } catch (const Error& e) {
      DC_INFO("%s; small collectives use the engine", e.what());
    }
  }
  if (!agree_min(comm, board != nullptr)) return;
  // The control channel already runs, and the engine wakes the board when a peer leaves or the
  // communicator fails (comm_failure.cpp): the board is handed over on the engine.
  call_on_engine([&] { comm->exec.board = std::move(board); }, comm->config.connect_timeout_ms,
                 "attaching the flat board");
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
