/* A stand-in for libcudart.so with one "device": fake_device_memory is reported as device memory,
 * everything else as unregistered host memory. Lets nccl_device_pointer_test exercise the
 * device-pointer check of libnccl.so.2 on machines without a GPU. */
#include <stdint.h>

enum { kFakeDeviceBytes = 4096 };
char fake_device_memory[kFakeDeviceBytes];

struct cudaPointerAttributes {
  int type; /* 0 unregistered, 1 host, 2 device, 3 managed */
  int device;
  void* devicePointer;
  void* hostPointer;
  long reserved[8];
};

int cudaGetDeviceCount(int* count) {
  *count = 1;
  return 0;
}

int cudaGetLastError(void) { return 0; }

int cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* pointer) {
  const uintptr_t p = (uintptr_t)pointer, begin = (uintptr_t)fake_device_memory;
  const int on_device = p >= begin && p < begin + kFakeDeviceBytes;
  attributes->type = on_device ? 2 : 0;
  attributes->device = on_device ? 0 : -1;
  attributes->devicePointer = on_device ? (void*)pointer : 0;
  attributes->hostPointer = on_device ? 0 : (void*)pointer;
  return 0;
}
