// Opens a device plugin (plugin_abi.h) with dlopen, never by linking: libnccl.so.2 and libdeepcomm.so
// must start on machines without a GPU driver, so the CUDA code lives in a library that is looked up
// only when device memory first needs it. A plugin that is absent, lacks the entry point or was
// built for another ABI version is refused with a message that says which and what to do.
#pragma once

#include <string>

#include "device/plugin_abi.h"

namespace dc::device {

// The CUDA plugin's file name, found through the dynamic loader's search path.
constexpr const char* kCudaPluginLibrary = "libdeepcomm-cuda.so";

struct DevicePlugin {
  void* handle = nullptr;  // dlopen's; never closed (the plugin's threads may outlive any caller)
  const dcDevicePlugin_t* api = nullptr;
  std::string library;
};

// Loads `library` (a path, or a file name looked for beside the library this code is in, then on
// the loader's search path) and checks its table.
// Throws dc::Error(dcSystemError) when it cannot be loaded or has no entry point, and
// dc::Error(dcInvalidUsage) when its ABI version or table size does not match; the message names
// the library and the reason. Any thread; each call opens the library (dlopen counts references).
DevicePlugin load_device_plugin(const std::string& library = kCudaPluginLibrary);

// Whether the plugin has the stream bridge's functions (ABI version 2), which it has all or none of.
bool has_streams(const dcDevicePlugin_t& api);

}  // namespace dc::device
