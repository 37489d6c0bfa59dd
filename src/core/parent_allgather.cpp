#include "src/core/parent_allgather.h"

#include <chrono>

#include "src/core/issue.h"
#include "src/exec/operation.h"

namespace dc {

ParentAllGather::ParentAllGather(dcComm* comm, std::vector<uint8_t> mine, const char* what)
    : mine_(std::move(mine)),
      all_(mine_.size() * comm->exec.nranks),
      batch_(std::make_shared<OpBatch>(1)),
      timeout_ms_(comm->config.timeout_ms),
      what_(what) {
  OpArgs args;
  args.collective = dcCollAllGather;
  args.sendbuf = mine_.data();
  args.recvbuf = all_.data();
  args.count = mine_.size();
  args.datatype = dcUint8;
  submit(std::make_shared<Operation>(&comm->exec, args, prepared_plan(comm, plan_request(comm, args)),
                                     comm->exec.next_collective_seq++, batch_));
}

const std::vector<uint8_t>& ParentAllGather::wait() const {
  if (!batch_->wait_until(std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_)))
    fail(dcSystemError, std::string("DeepComm: ") + what_ + " timed out exchanging its arguments");
  Status st = batch_->status();
  if (!st.ok()) throw Error(st.code, st.message);
  return all_;
}

}  // namespace dc
