// Runs a function on the progress engine and waits for it (bounded), for set-up work that must
// touch transport objects from the engine thread.
//
// The function may capture the caller's locals by reference: when the wait times out before the
// engine started it, the call is abandoned and the engine never runs it; once the engine has started
// it, the caller waits for it to end (engine work never blocks), so it never outlives what it touches.
#pragma once

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>

#include "base/error.h"
#include "src/exec/engine.h"

namespace dc {

template <class F>
auto call_on_engine(F&& fn, int timeout_ms, const char* what) -> decltype(fn()) {
  using R = decltype(fn());
  struct Call {
    std::packaged_task<R()> task;
    std::mutex mutex;
    enum class State { Queued, Running, Abandoned } state = State::Queued;
  };
  auto call = std::make_shared<Call>();
  call->task = std::packaged_task<R()>(std::forward<F>(fn));
  auto result = call->task.get_future();
  Engine::instance().post([call] {
    {
      std::lock_guard<std::mutex> lock(call->mutex);
      if (call->state == Call::State::Abandoned) return;
      call->state = Call::State::Running;
    }
    call->task();
  });
  Engine::Waiting waiting(Engine::instance());
  if (result.wait_for(std::chrono::milliseconds(timeout_ms)) != std::future_status::ready) {
    std::unique_lock<std::mutex> lock(call->mutex);
    if (call->state == Call::State::Queued) {
      call->state = Call::State::Abandoned;
      fail(dcSystemError, std::string("DeepComm: timed out waiting for the progress engine (") + what + ")");
    }
    lock.unlock();
    result.wait();  // it is running right now: it ends shortly
  }
  return result.get();
}

}  // namespace dc
