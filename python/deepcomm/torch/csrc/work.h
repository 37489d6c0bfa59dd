// One operation of a DeepComm group as torch sees it: the DeepComm requests it started, what to
// do when they complete (copy staged results out, free a PREMUL_SUM operator), its result tensors
// and its future. The completion queue completes it exactly once.
#pragma once

#include <deepcomm/deepcomm.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <string>
#include <vector>

namespace deepcomm_torch {

class DeepCommWork : public c10d::Work {
 public:
  DeepCommWork(int rank, c10d::OpType type, const char* name, std::vector<at::Tensor> outputs);

  // Blocks until completed (every operation has a deadline: the group's timeout) or until
  // timeout; rethrows the operation's error.
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  std::vector<at::Tensor> result() override { return outputs_; }
  // Waits for completion (without the GIL, which torch's binding holds: the completion thread
  // may need it), then completes the future in the calling thread. Callbacks attached
  // next run in that thread (e.g. DDP's autograd thread) at the same point on every rank, so the
  // collectives they issue keep one order per group on every rank, as DeepComm requires. Were the
  // future completed by the completion thread, a callback's collective (PowerSGD's) would race
  // with the next call from the autograd thread. The completion thread never runs callbacks, so a
  // callback may wait on the future of a collective it issued.
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // Marks it completed, with error or not (the completion thread, once).
  void complete(std::exception_ptr error);

  const std::string name;
  std::vector<dcRequest_t> requests;   // started, in order
  std::exception_ptr start_error;      // a call that failed to start (later ones not made)
  std::function<void()> on_success;    // copies staged results into the outputs
  std::function<void()> cleanup;       // runs after completion, error or not
  std::vector<at::Tensor> keep_alive;  // inputs and staging buffers the requests use

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  bool future_completed_ = false;  // under mutex_
};

}  // namespace deepcomm_torch
