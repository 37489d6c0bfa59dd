// Runs a piece of device-queue work and turns what it throws into a Status: the CPU queue's steps
// and the CPU stream queue's codec calls, which must not let an exception out (a stream's lane
// thread would end the process).
#pragma once

#include <exception>
#include <new>
#include <string>

#include "base/error.h"

namespace dc::device {

template <class Job>
Status guarded(Job&& job) {
  try {
    return job();
  } catch (const Error& e) {
    return Status::failure(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return Status::failure(dcSystemError, "DeepComm: out of memory in a local step");
  } catch (const std::exception& e) {
    return Status::failure(dcInternalError, std::string("DeepComm: internal error in a local step: ") + e.what());
  }
}

}  // namespace dc::device
