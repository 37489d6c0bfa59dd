#include "work.h"

#include "callback_runner.h"

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>

namespace deepcomm_torch {

DeepCommWork::DeepCommWork(int rank, c10d::OpType type, const char* name, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type),
      name(name),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

bool DeepCommWork::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (timeout == kNoTimeout) {
    cv_.wait(lock, [this] { return completed_; });
  } else if (!cv_.wait_for(lock, timeout, [this] { return completed_; })) {
    C10_THROW_ERROR(DistBackendError, "deepcomm: " + name + " did not complete within the wait's timeout of " +
                                          std::to_string(timeout.count()) + " ms");
  }
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> DeepCommWork::getFuture() {
  bool complete_now = false;
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!future_requested_) {
      future_requested_ = true;
      complete_now = completed_;  // complete() has passed and left the future to us
      error = exception_;
    }
  }
  if (complete_now) complete_future(error);
  return future_;
}

void DeepCommWork::complete(std::exception_ptr error, CallbackRunner& runner) {
  bool future_requested;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completed_ = true;
    exception_ = error;
    future_requested = future_requested_;
  }
  cv_.notify_all();
  if (future_requested) {
    c10::intrusive_ptr<DeepCommWork> self = c10::intrusive_ptr<DeepCommWork>::reclaim_copy(this);
    runner.post([self, error] { self->complete_future(error); });
  }
}

void DeepCommWork::complete_future(std::exception_ptr error) {
  if (error)
    future_->setError(error);
  else
    future_->markCompleted(c10::IValue(outputs_));
}

}  // namespace deepcomm_torch
