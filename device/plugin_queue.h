// The device-queue contract (device_queue.h) over a loaded plugin's C ABI (plugin_abi.h): steps are
// translated to the ABI's descriptors, completions come back by tag. ABI version 1 has the element
// steps only; a codec step ends at post with dcInvalidUsage.
#pragma once

#include <unordered_map>
#include <vector>

#include "device/device_queue.h"
#include "device/plugin_loader.h"

namespace dc::device {

class PluginQueue : public DeviceQueue {
 public:
  // Creates a queue of the plugin; throws dc::Error with the plugin's message when it cannot.
  explicit PluginQueue(const DevicePlugin& plugin);
  ~PluginQueue() override;

  Posted post(const LocalStep& step, Stream stream, Completion completion) override;
  void feed(uint64_t id, size_t available, const Status* ended) override;
  size_t poll() override;
  int completion_fd() const override;
  bool has_completions() const override;
  bool element_steps_end_at_post() const override;

  PluginQueue(const PluginQueue&) = delete;
  PluginQueue& operator=(const PluginQueue&) = delete;

 private:
  const dcDevicePlugin_t* api_;
  void* queue_ = nullptr;
  uint64_t next_tag_ = 1;
  std::unordered_map<uint64_t, Completion> pending_;  // by the tag the plugin got
  std::vector<dcDeviceCompletion_t> batch_;
};

}  // namespace dc::device
