#include "device/plugin_queue.h"

#include <poll.h>

#include <string>

#include "device/abi_step.h"
#include "device/cpu_steps.h"

namespace dc::device {

PluginQueue::PluginQueue(const DevicePlugin& plugin) : api_(plugin.api), batch_(64) {
  char error[256] = {};
  const int32_t rc = api_->create(&queue_, error, sizeof error);
  if (rc != 0 || !queue_) {
    error[sizeof error - 1] = '\0';
    fail(rc != 0 ? static_cast<dcResult_t>(rc) : dcInternalError,
         "DeepComm: the device plugin " + plugin.library + " could not make a queue: " + error);
  }
}

PluginQueue::~PluginQueue() { api_->destroy(queue_); }

Posted PluginQueue::post(const LocalStep& step, Stream stream, Completion completion) {
  if (!is_element_step(step.kind))
    return Posted{true, Status::failure(dcInvalidUsage, "DeepComm: the device plugin runs no codec step yet"), 0};
  const dcDeviceStep_t s = abi_step_of(step);
  const uint64_t tag = next_tag_++;
  int32_t result = dcSuccess;
  if (api_->post(queue_, &s, stream.handle, tag, &result) == 1) {
    if (result == dcSuccess) return Posted{true, Status::success(), 0};
    return Posted{true, Status::failure(static_cast<dcResult_t>(result), "DeepComm: the device plugin refused a step"),
                  0};
  }
  pending_.emplace(tag, completion);
  return Posted{false, {}, 0};
}

void PluginQueue::feed(uint64_t, size_t, const Status*) {}  // no DecodeArriving in ABI version 1

size_t PluginQueue::poll() {
  size_t total = 0;
  for (;;) {
    const int32_t n = api_->poll(queue_, batch_.data(), static_cast<int32_t>(batch_.size()));
    for (int32_t i = 0; i < n; ++i) {
      const dcDeviceCompletion_t& c = batch_[i];
      auto it = pending_.find(c.tag);
      if (it == pending_.end()) continue;  // not a tag of this queue: the plugin's bug, ignored
      const Completion completion = it->second;
      pending_.erase(it);
      const Status status = c.result == dcSuccess
                                ? Status::success()
                                : Status::failure(static_cast<dcResult_t>(c.result),
                                                  c.message ? c.message : "DeepComm: a device step failed");
      if (completion.fn) completion.fn(completion.context, completion.tag, status);
    }
    total += n > 0 ? n : 0;
    if (n < static_cast<int32_t>(batch_.size())) return total;
  }
}

int PluginQueue::completion_fd() const { return api_->completion_fd(queue_); }

bool PluginQueue::has_completions() const {
  // The ABI has no such query: the descriptor's readiness says it (without one, assume so).
  const int fd = completion_fd();
  if (fd < 0) return !pending_.empty();
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

bool PluginQueue::element_steps_end_at_post() const {
  return api_->flags & DEEPCOMM_DEVICE_PLUGIN_ENDS_ELEMENT_STEPS_AT_POST;
}

}  // namespace dc::device
