#include "src/nccl/device_pointer.h"

#include <dlfcn.h>

#include "base/error.h"

namespace dc::nccl {

namespace {

// Layout of cudaPointerAttributes since CUDA 11 (only `type` is read). The reserved room covers
// fields a later runtime may append, so the runtime never writes past this object.
struct CudaPointerAttributes {
  int type;
  int device;
  void* devicePointer;
  void* hostPointer;
  long reserved[16];
};
constexpr int kCudaMemoryTypeDevice = 2;
constexpr int kCudaMemoryTypeManaged = 3;
constexpr int kCudaSuccess = 0;

// The CUDA runtime, found at run time so that libnccl.so.2 has no link-time dependency on it.
class CudaRuntime {
 public:
  static const CudaRuntime& instance() {
    static const CudaRuntime runtime;
    return runtime;
  }

  bool has_devices() const { return get_attributes_ != nullptr; }

  bool is_device_memory(const void* pointer) const {
    if (get_attributes_ == nullptr || pointer == nullptr) return false;
    CudaPointerAttributes attributes{};
    if (get_attributes_(&attributes, pointer) != kCudaSuccess) {
      // Old runtimes fail on unregistered host memory; do not leave that error to the caller.
      get_last_error_();
      return false;
    }
    return attributes.type == kCudaMemoryTypeDevice || attributes.type == kCudaMemoryTypeManaged;
  }

 private:
  using GetAttributes = int (*)(CudaPointerAttributes*, const void*);
  using GetDeviceCount = int (*)(int*);
  using GetLastError = int (*)();

  CudaRuntime() {
    // Prefer a runtime the program already loaded, so both agree on the CUDA context. The
    // library is never unloaded: once called it may have registered exit handlers.
    for (const char* name : {"libcudart.so", "libcudart.so.13", "libcudart.so.12"}) {
      void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
      if (handle == nullptr) handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) {
        bind(handle);
        return;
      }
    }
  }

  void bind(void* handle) {
    auto get_attributes = reinterpret_cast<GetAttributes>(dlsym(handle, "cudaPointerGetAttributes"));
    auto get_device_count = reinterpret_cast<GetDeviceCount>(dlsym(handle, "cudaGetDeviceCount"));
    auto get_last_error = reinterpret_cast<GetLastError>(dlsym(handle, "cudaGetLastError"));
    if (get_attributes == nullptr || get_device_count == nullptr || get_last_error == nullptr) return;
    // Without a device no pointer can be device memory: skip the query on every call.
    int devices = 0;
    if (get_device_count(&devices) != kCudaSuccess || devices == 0) {
      get_last_error();
      return;
    }
    get_attributes_ = get_attributes;
    get_last_error_ = get_last_error;
  }

  GetAttributes get_attributes_ = nullptr;
  GetLastError get_last_error_ = nullptr;
};

}  // namespace

bool cuda_device_memory(const void* pointer) { return CudaRuntime::instance().is_device_memory(pointer); }

bool cuda_devices_present() { return CudaRuntime::instance().has_devices(); }

}  // namespace dc::nccl
