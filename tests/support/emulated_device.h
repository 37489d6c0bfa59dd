// The emulated device of the NCCL ABI's tests: the test plugin (tests/device/test_plugin.cpp, whose
// streams are the CPU stream queue's) loaded as libnccl.so.2 loads it, for what a program does with
// CUDA's runtime on a real device. Header-only: its users link libnccl.so.2, not DeepComm's objects.
#pragma once

#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "deepcomm/nccl.h"

namespace dctest {

// The test plugin's stand-ins for cudaStreamQuery and a long kernel, from the copy libnccl.so.2
// loads (dlopen gives both the same one).
struct Emulated {
  int (*idle)(uint64_t stream) = nullptr;
  void (*busy)(uint64_t stream, int milliseconds) = nullptr;
  int (*synchronize)(uint64_t stream, int timeout_ms) = nullptr;
  void (*begin_capture)(uint64_t stream) = nullptr;
  int (*end_capture)(uint64_t stream) = nullptr;  // the graph's number
  int (*launch)(int graph, uint64_t stream) = nullptr;
  void (*destroy_graph)(int graph) = nullptr;
  int (*encodes)() = nullptr;                  // the GPU codec's encodes enqueued so far
  void (*corrupt_encodes)(int how) = nullptr;  // 1: flip each message's checksum; 2: fail each encode

  bool load(const char* plugin_path) {
    void* plugin = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
    if (!plugin) return false;
    idle = reinterpret_cast<int (*)(uint64_t)>(dlsym(plugin, "testPluginIdle"));
    busy = reinterpret_cast<void (*)(uint64_t, int)>(dlsym(plugin, "testPluginBusy"));
    synchronize = reinterpret_cast<int (*)(uint64_t, int)>(dlsym(plugin, "testPluginSynchronize"));
    begin_capture = reinterpret_cast<void (*)(uint64_t)>(dlsym(plugin, "testPluginBeginCapture"));
    end_capture = reinterpret_cast<int (*)(uint64_t)>(dlsym(plugin, "testPluginEndCapture"));
    launch = reinterpret_cast<int (*)(int, uint64_t)>(dlsym(plugin, "testPluginLaunch"));
    destroy_graph = reinterpret_cast<void (*)(int)>(dlsym(plugin, "testPluginDestroyGraph"));
    encodes = reinterpret_cast<int (*)()>(dlsym(plugin, "testPluginEncodes"));
    corrupt_encodes = reinterpret_cast<void (*)(int)>(dlsym(plugin, "testPluginCorruptEncodes"));
    return idle && busy && synchronize && begin_capture && end_capture && launch && destroy_graph && encodes &&
           corrupt_encodes;
  }
};

// nccl-tests' wait: query the stream, and the communicator's asynchronous error, until one says so.
inline ncclResult_t wait_for_stream(const Emulated& device, cudaStream_t stream, ncclComm_t comm, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    ncclResult_t async = ncclSuccess;
    if (ncclCommGetAsyncError(comm, &async) != ncclSuccess) return ncclInternalError;
    if (async != ncclSuccess) return async;
    if (device.idle(reinterpret_cast<uint64_t>(stream))) return ncclSuccess;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return ncclSystemError;  // still running: the test reports it
}

}  // namespace dctest
