#include "work.h"

#include "gil.h"

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>

namespace deepcomm_torch {

DeepCommWork::DeepCommWork(int rank, c10d::OpType type, const char* name, std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type),
      name(name),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

bool DeepCommWork::wait(std::chrono::milliseconds timeout) {
  GilReleasedIfHeld gil_released;
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
  std::exception_ptr error;
  {
    GilReleasedIfHeld gil_released;  // torch's binding holds it
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return completed_; });  // every operation has a deadline
    if (future_completed_) return future_;
    future_completed_ = true;
    error = exception_;
  }
  if (error) future_->setError(error);
  else future_->markCompleted(c10::IValue(outputs_));
  return future_;
}

void DeepCommWork::complete(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completed_ = true;
    exception_ = error;
  }
  cv_.notify_all();
}

}  // namespace deepcomm_torch
