#include "device/plugin_loader.h"

#include <dlfcn.h>

#include "base/error.h"

namespace dc::device {

bool has_streams(const dcDevicePlugin_t& api) {
  return api.alloc_pinned && api.free_pinned && api.alloc_device && api.free_device && api.is_device_memory &&
         api.enqueue_copy && api.enqueue_doorbell && api.enqueue_gate && api.open_gate && api.stream_capturing &&
         api.last_error && api.enqueue_gate_reset && api.retain_until_graph_destroyed && api.encode_workspace_bytes &&
         api.enqueue_encode && api.decode_workspace_bytes && api.enqueue_decode && api.enqueue_step;
}

namespace {

// A bare file name is looked for first beside the library this code is in (libnccl.so.2 or
// libdeepcomm.so, where the plugin is installed), then on the loader's search path.
void* open_library(const std::string& library) {
  if (library.find('/') == std::string::npos) {
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&open_library), &self) != 0 && self.dli_fname != nullptr) {
      const std::string path = self.dli_fname;
      const size_t slash = path.rfind('/');
      if (slash != std::string::npos)
        if (void* beside = dlopen((path.substr(0, slash + 1) + library).c_str(), RTLD_NOW | RTLD_LOCAL)) return beside;
    }
  }
  return dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
}

}  // namespace

DevicePlugin load_device_plugin(const std::string& library) {
  void* handle = open_library(library);
  if (!handle) {
    const char* why = dlerror();
    fail(dcSystemError, "DeepComm: device memory needs the device plugin " + library + ", which cannot be loaded (" +
                            (why ? why : "unknown reason") +
                            "); build DeepComm with the CUDA toolkit and put the plugin beside libdeepcomm");
  }
  auto entry = reinterpret_cast<dcDevicePluginEntry_t>(dlsym(handle, DEEPCOMM_DEVICE_PLUGIN_ENTRY));
  if (!entry) {
    dlclose(handle);
    fail(dcSystemError, "DeepComm: " + library + " is not a DeepComm device plugin (it has no " +
                            DEEPCOMM_DEVICE_PLUGIN_ENTRY + " function)");
  }
  const dcDevicePlugin_t* api = entry();
  std::string mismatch;
  if (!api) mismatch = "its " + std::string(DEEPCOMM_DEVICE_PLUGIN_ENTRY) + " returned no table";
  else if (api->abi_version != DEEPCOMM_DEVICE_PLUGIN_ABI_VERSION)
    mismatch = "it implements device plugin ABI version " + std::to_string(api->abi_version) +
               ", this DeepComm needs " + std::to_string(DEEPCOMM_DEVICE_PLUGIN_ABI_VERSION);
  else if (api->struct_size < sizeof(dcDevicePlugin_t))
    mismatch = "its table has " + std::to_string(api->struct_size) + " bytes, ABI version " +
               std::to_string(DEEPCOMM_DEVICE_PLUGIN_ABI_VERSION) + " has " + std::to_string(sizeof(dcDevicePlugin_t));
  else if (!api->create || !api->destroy || !api->post || !api->poll || !api->completion_fd)
    mismatch = "its table lacks a function";
  else if (has_streams(*api) != (api->alloc_pinned != nullptr))
    mismatch = "its table has some of the stream functions, not all";
  if (!mismatch.empty()) {
    dlclose(handle);
    fail(dcInvalidUsage, "DeepComm: the device plugin " + library + " does not match this DeepComm: " + mismatch +
                             " (use the plugin built with this DeepComm)");
  }
  return DevicePlugin{handle, api, library};
}

}  // namespace dc::device
