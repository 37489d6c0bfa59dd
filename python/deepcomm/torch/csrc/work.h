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

class CallbackRunner;

class DeepCommWork : public c10d::Work {
 public:
  DeepCommWork(int rank, c10d::OpType type, const char* name, std::vector<at::Tensor> outputs);

  // Blocks until completed (every operation has a deadline: the group's timeout) or until
  // timeout; rethrows the operation's error.
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // Marks it completed (error or not) and completes its future on a runner thread, never here.
  void complete(std::exception_ptr error, CallbackRunner& runner);

  const std::string name;
  std::vector<dcRequest_t> requests;         // started, in order
  std::exception_ptr start_error;            // a call that failed to start (later ones not made)
  std::function<void()> on_success;          // copies staged results into the outputs
  std::function<void()> cleanup;             // runs after completion, error or not
  std::vector<at::Tensor> keep_alive;        // inputs and staging buffers the requests use

 private:
  void complete_future(std::exception_ptr error);

  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  bool future_requested_ = false;  // under mutex_: someone may have attached callbacks
};

}  // namespace deepcomm_torch
