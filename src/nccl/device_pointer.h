// What the program's own CUDA runtime says about memory, found at run time (libnccl.so.2 never links
// it): the probe that tells whether a device plugin is needed (device_runtime.h).
#pragma once

namespace dc::nccl {

// Whether the CUDA runtime the program loaded (or one on the loader's path) sees a device.
bool cuda_devices_present();
// Whether pointer is device or managed memory according to that runtime; false without a device.
bool cuda_device_memory(const void* pointer);

}  // namespace dc::nccl
