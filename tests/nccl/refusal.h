// A refused NCCL call as a test sees it: the result and the last-error message the call set.
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "deepcomm/nccl.h"

namespace dctest {

struct Refusal {
  ncclResult_t result;
  std::string message;
};

// Runs the call on a fresh thread, whose last-error message starts empty, so that a non-empty
// message afterwards was set by this very call.
inline Refusal call_on_fresh_thread(const std::function<ncclResult_t()>& call) {
  Refusal refusal{ncclSuccess, ""};
  std::thread([&] {
    refusal.result = call();
    refusal.message = ncclGetLastError(nullptr);
  }).join();
  return refusal;
}

}  // namespace dctest
