#include "src/exec/exec_comm.h"

#include <chrono>

#include "src/exec/engine.h"
#include "src/exec/flat_board.h"
#include "src/exec/residual_store.h"

namespace dc {

PeerLinks::~PeerLinks() = default;

ExecComm::ExecComm() = default;
ExecComm::~ExecComm() = default;

void ExecComm::set_error(dcResult_t code, const std::string& message) {
  std::lock_guard<std::mutex> lock(error_mutex);
  if (async_error.load() == dcSuccess) {
    error_message = message;
    async_error.store(code);
  }
}

Status ExecComm::error() {
  std::lock_guard<std::mutex> lock(error_mutex);
  return Status{static_cast<dcResult_t>(async_error.load()), error_message};
}

bool ExecComm::wait_idle(int wait_ms) {
  Engine::Waiting waiting(Engine::instance());
  std::unique_lock<std::mutex> lock(inflight_mutex);
  return inflight_cv.wait_for(lock, std::chrono::milliseconds(wait_ms), [this] { return inflight == 0; });
}

uint64_t ExecComm::releasable_bytes() const {
  uint64_t bytes = scratch_held.load();
  for_each_connection([&](Connection& connection) { bytes += connection.held_bytes(); });
  return bytes;
}

uint64_t ExecComm::persistent_bytes() const {
  uint64_t bytes = residual_store ? residual_store->bytes() : 0;
  if (board) bytes += board->held_bytes();
  return bytes;
}

void ExecComm::release_scratch() {
  for (ScratchMemory& buffer : scratch) buffer = ScratchMemory();
  scratch_held.store(0);
}

size_t ExecComm::release_idle_connections() {
  size_t bytes = 0;
  for_each_connection([&](Connection& connection) { bytes += connection.release_idle_memory(); });
  return bytes;
}

}  // namespace dc
