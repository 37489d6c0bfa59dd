// A small all-gather on an existing communicator, by which its ranks agree on the arguments of a
// call that makes a new communicator from it (split: colors and keys; grow: the size and the id).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "src/core/communicator.h"

namespace dc {

class OpBatch;

class ParentAllGather {
 public:
  // Issues the all-gather of `mine` (the same length on every rank) on comm now, in order with
  // comm's other operations; `what` names the call in errors.
  ParentAllGather(dcComm* comm, std::vector<uint8_t> mine, const char* what);
  ParentAllGather(const ParentAllGather&) = delete;  // the operation writes into this one's buffers
  ParentAllGather& operator=(const ParentAllGather&) = delete;
  // Every rank's bytes, rank after rank, once the all-gather finished; throws its error, or
  // dcSystemError when comm's timeout passes first. May run on another thread (a set-up thread).
  const std::vector<uint8_t>& wait() const;
  size_t bytes_per_rank() const { return mine_.size(); }

 private:
  std::vector<uint8_t> mine_;
  std::vector<uint8_t> all_;
  std::shared_ptr<OpBatch> batch_;
  int timeout_ms_ = 0;
  const char* what_;
};

}  // namespace dc
