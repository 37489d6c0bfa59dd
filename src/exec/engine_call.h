// Runs a function on the progress engine and waits for it (bounded), for set-up work that must
// touch transport objects from the engine thread.
#pragma once

#include <chrono>
#include <future>
#include <string>

#include "src/base/error.h"
#include "src/exec/engine.h"

namespace dc {

template <class F>
auto call_on_engine(F&& fn, int timeout_ms, const char* what) -> decltype(fn()) {
  using R = decltype(fn());
  auto task = std::make_shared<std::packaged_task<R()>>(std::forward<F>(fn));
  auto result = task->get_future();
  Engine::instance().post([task] { (*task)(); });
  if (result.wait_for(std::chrono::milliseconds(timeout_ms)) != std::future_status::ready)
    fail(dcSystemError, std::string("DeepComm: timed out waiting for the progress engine (") + what + ")");
  return result.get();
}

}  // namespace dc
