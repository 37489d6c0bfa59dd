// A local element step as the plugin ABI's descriptor (dcDeviceStep_t) and back: what the plugin
// queue posts, and what a CPU implementation of the ABI (the stream queue's enqueue_step, the test
// plugin) runs.
#pragma once

#include <cstring>

#include "device/device_queue.h"
#include "device/plugin_abi.h"

namespace dc::device {

inline dcDeviceStep_t abi_step_of(const LocalStep& step) {
  dcDeviceStep_t s{};
  s.kind = static_cast<uint32_t>(step.kind);
  s.datatype = step.type;
  s.op = step.op;
  s.divisor = step.divisor;
  s.dst = step.dst;
  s.src = step.src;
  s.src2 = step.src2;
  s.count = step.count;
  std::memcpy(s.scalar, step.scalar, sizeof s.scalar);
  return s;
}

inline LocalStep local_step_of(const dcDeviceStep_t& s) {
  LocalStep step;
  step.kind = static_cast<StepKind>(s.kind);
  step.type = static_cast<dcDataType_t>(s.datatype);
  step.op = static_cast<dcRedOp_t>(s.op);
  step.divisor = s.divisor;
  step.dst = s.dst;
  step.src = s.src;
  step.src2 = s.src2;
  step.count = s.count;
  std::memcpy(step.scalar, s.scalar, sizeof step.scalar);
  return step;
}

}  // namespace dc::device
