#include "src/nccl/device_runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/config_table.h"
#include "base/log.h"
#include "device/plugin_stream_queue.h"
#include "src/core/issue.h"
#include "src/nccl/device_pointer.h"
#include "src/nccl/settings.h"

namespace dc::nccl {

namespace {

// How long a host-memory call, or ncclCommDestroy, waits for the communicator's earlier device
// calls to run: their streams may first have to finish the user's own work.
constexpr std::chrono::seconds kDeviceCallsWait{300};

// The process's device plugin and its stream queue, loaded at first need; never destroyed, since
// bridges' threads and the plugin's may outlive static destruction.
class DeviceRuntime {
 public:
  static DeviceRuntime& instance() {
    static DeviceRuntime* runtime = new DeviceRuntime;
    return *runtime;
  }

  device::PluginStreamQueue* streams() { return streams_.get(); }

  bool is_device_memory(const void* pointer) {
    if (streams_) return streams_->is_device_memory(pointer);
    if (!cuda_device_memory(pointer)) return false;
    fail(dcInvalidUsage, "DeepComm: device memory needs the device plugin: " + why_not_);
  }

 private:
  DeviceRuntime() {
    const std::optional<std::string> named = config::text(settings::kDevicePlugin);
    if (!named && !cuda_devices_present()) {
      why_not_ = "no CUDA device was found and DEEPCOMM_DEVICE_PLUGIN is not set";
      return;
    }
    try {
      const device::DevicePlugin plugin = device::load_device_plugin(named.value_or(device::kCudaPluginLibrary));
      streams_ = std::make_unique<device::PluginStreamQueue>(plugin);
    } catch (const Error& e) {
      why_not_ = e.what();
      DC_WARN("%s", why_not_.c_str());
    }
  }

  std::unique_ptr<device::PluginStreamQueue> streams_;
  std::string why_not_;  // when streams_ is null
};

constexpr const char* kMixedGroup =
    "DeepComm: a group holds host-memory and device-memory calls of one communicator; put them in separate "
    "groups";

// The communicators whose bridges collect device calls for this thread's open group.
thread_local std::vector<ncclComm_t> t_device_group;

// The communicators' bridges, made on their first device call.
class Bridges {
 public:
  static Bridges& instance() {
    static Bridges* bridges = new Bridges;
    return *bridges;
  }

  StreamBridge& of(ncclComm_t comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<StreamBridge>& bridge = bridges_[comm];
    if (!bridge) {
      device::PluginStreamQueue* streams = DeviceRuntime::instance().streams();
      if (!streams) fail(dcInvalidUsage, "DeepComm: device memory needs the device plugin");
      try {
        bridge = std::make_unique<StreamBridge>(reinterpret_cast<dcComm_t>(comm), *streams);
        count_.fetch_add(1, std::memory_order_release);
      } catch (...) {
        bridges_.erase(comm);
        throw;
      }
    }
    return *bridge;
  }

  StreamBridge* find(ncclComm_t comm) {
    if (count_.load(std::memory_order_acquire) == 0) return nullptr;  // host-only programs: no lock
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = bridges_.find(comm);
    return it == bridges_.end() ? nullptr : it->second.get();
  }

  std::unique_ptr<StreamBridge> take(ncclComm_t comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = bridges_.find(comm);
    if (it == bridges_.end()) return nullptr;
    std::unique_ptr<StreamBridge> bridge = std::move(it->second);
    bridges_.erase(it);
    count_.fetch_sub(1, std::memory_order_release);
    return bridge;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<ncclComm_t, std::unique_ptr<StreamBridge>> bridges_;
  std::atomic<int> count_{0};  // bridges_.size(), read without the lock
};

// The live device registrations; never destroyed (a program may deregister during exit).
class DeviceRegistrations {
 public:
  static DeviceRegistrations& instance() {
    static auto* registrations = new DeviceRegistrations;
    return *registrations;
  }

  // A handle of its own: the address of a cell that holds its communicator.
  void* add(ncclComm_t comm) {
    auto registration = std::make_unique<ncclComm_t>(comm);
    void* handle = registration.get();
    std::lock_guard<std::mutex> lock(mutex_);
    live_.emplace(handle, std::move(registration));
    return handle;
  }

  bool remove(ncclComm_t comm, void* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(handle);
    if (it == live_.end() || *it->second != comm) return false;
    live_.erase(it);
    return true;
  }

  void remove_all_of(ncclComm_t comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::erase_if(live_, [comm](const auto& entry) { return *entry.second == comm; });
  }

 private:
  std::mutex mutex_;
  std::unordered_map<void*, std::unique_ptr<ncclComm_t>> live_;
};

}  // namespace

bool on_device(std::initializer_list<const void*> buffers) {
  DeviceRuntime& runtime = DeviceRuntime::instance();
  int device = 0, host = 0;
  for (const void* buffer : buffers)
    if (buffer != nullptr) ++(runtime.is_device_memory(buffer) ? device : host);
  if (device == 0) return false;
  if (host > 0)
    fail(dcInvalidUsage,
         "DeepComm: the call mixes host and device buffers; pass all of them in device memory or all "
         "in host memory");
  return true;
}

void require_host_memory(const void* pointer, const char* what) {
  if (DeviceRuntime::instance().is_device_memory(pointer))
    fail(dcInvalidUsage, std::string("DeepComm: ") + what + " in device memory is not supported yet; pass host memory");
}

StreamBridge& device_bridge(ncclComm_t comm) {
  StreamBridge& bridge = Bridges::instance().of(comm);
  if (!group_open()) return bridge;
  if (queued_in_group(reinterpret_cast<dcComm_t>(comm))) fail(dcInvalidUsage, kMixedGroup);
  if (std::find(t_device_group.begin(), t_device_group.end(), comm) == t_device_group.end()) {
    bridge.begin_group();
    t_device_group.push_back(comm);
  }
  return bridge;
}

dcResult_t end_device_group(bool drop) {
  std::vector<ncclComm_t> comms;
  comms.swap(t_device_group);
  dcResult_t first = dcSuccess;
  for (ncclComm_t comm : comms) {
    StreamBridge* bridge = Bridges::instance().find(comm);
    if (bridge == nullptr) continue;  // destroyed inside the group
    const dcResult_t result = drop ? (bridge->drop_group(), dcSuccess) : bridge->end_group();
    if (first == dcSuccess) first = result;
  }
  return first;
}

void wait_for_device_calls(ncclComm_t comm) {
  if (group_open() && std::find(t_device_group.begin(), t_device_group.end(), comm) != t_device_group.end())
    fail(dcInvalidUsage, kMixedGroup);
  StreamBridge* bridge = Bridges::instance().find(comm);
  if (bridge && !bridge->wait_until_run(kDeviceCallsWait))
    fail(dcSystemError, "DeepComm: a host-memory call waited " + std::to_string(kDeviceCallsWait.count()) +
                            " s for the communicator's earlier device calls: their streams have not reached them");
}

Status device_calls_error(ncclComm_t comm) {
  StreamBridge* bridge = Bridges::instance().find(comm);
  return bridge ? bridge->async_error() : Status::success();
}

size_t device_cached_bytes(ncclComm_t comm) {
  StreamBridge* bridge = Bridges::instance().find(comm);
  return bridge ? bridge->cached_bytes() : 0;
}

void release_device_cache(ncclComm_t comm) {
  if (StreamBridge* bridge = Bridges::instance().find(comm)) bridge->release_cached_memory();
}

void fail_bridge(ncclComm_t comm, const char* why) {
  if (StreamBridge* bridge = Bridges::instance().find(comm))
    bridge->fail(Status::failure(dcInvalidUsage, std::string("DeepComm: ") + why));
}

void end_bridge(ncclComm_t comm) {
  DeviceRegistrations::instance().remove_all_of(comm);
  std::unique_ptr<StreamBridge> bridge = Bridges::instance().take(comm);
  if (bridge && !bridge->wait_until_run(kDeviceCallsWait))
    DC_WARN("ncclCommDestroy: device calls of the communicator never reached their streams; their gates open now");
}

dcResult_t register_device_buffer(ncclComm_t comm, size_t bytes, void** handle) {
  if (handle == nullptr) fail(dcInvalidArgument, "DeepComm: ncclCommRegister: handle must not be NULL");
  if (bytes == 0) fail(dcInvalidArgument, "DeepComm: cannot register an empty buffer");
  int rank = 0;
  if (const dcResult_t result = dcCommRank(reinterpret_cast<dcComm_t>(comm), &rank); result != dcSuccess)
    return result;  // not a communicator: its message is set
  *handle = DeviceRegistrations::instance().add(comm);
  return dcSuccess;
}

bool deregister_device_buffer(ncclComm_t comm, void* handle) {
  return DeviceRegistrations::instance().remove(comm, handle);
}

bool alloc_device_memory(void** pointer, size_t bytes) {
  device::PluginStreamQueue* streams = DeviceRuntime::instance().streams();
  if (!streams) return false;
  Status status;
  *pointer = streams->alloc_device(bytes, &status);
  if (!*pointer) fail(status.code, status.message);
  return true;
}

bool free_device_memory(void* pointer) {
  device::PluginStreamQueue* streams = DeviceRuntime::instance().streams();
  if (!streams || !streams->is_device_memory(pointer)) return false;
  const Status status = streams->free_device(pointer);
  if (!status.ok()) fail(status.code, status.message);
  return true;
}

}  // namespace dc::nccl
