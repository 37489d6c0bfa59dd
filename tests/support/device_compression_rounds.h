// DEEPCOMM_COMPRESS on device buffers against host buffers, on one rank of an NCCL communicator
// whose ranks all run this (tests/nccl/device_bridge_test.cpp; the namespace cluster's
// tests/cluster/device_compress_probe.cpp): three rounds of two buffers, each all-reduced first on
// host memory, then on device memory coded by the device's codec (one encode of the test plugin at
// plugin_path); the two must give the same bits, and the host result must not be about the exact
// one (it was compressed). The host calls must run the sparse all-gather plan (DEEPCOMM_ALGO=
// sparsegather), whose bits the device path gives. op: ncclSum or ncclAvg. reset_round >= 0:
// DEEPCOMM_COMPRESS_RESET is set from the first call and changed in that round. Returns the number
// of failures, each said on stderr.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "deepcomm/nccl.h"
#include "tests/support/emulated_device.h"
#include "tests/support/nccl_ranks.h"

namespace dctest {

inline int device_compression_rounds(int rank, int n, ncclComm_t comm, const char* plugin_path, ncclRedOp_t op,
                                     int reset_round) {
  Emulated device;
  if (!device.load(plugin_path)) return complain(rank, std::string("test plugin: ") + dlerror());
  const size_t count = 30011;
  const size_t bytes = count * sizeof(float);
  const auto stream = reinterpret_cast<cudaStream_t>(uintptr_t{0x73});
  const auto input = [](int r, size_t b, size_t i) {
    return std::sin(0.37f * float(i) + float(b) + 0.5f * float(r)) * (1.0f + float(i % 13));
  };
  std::vector<std::vector<float>> host(2, std::vector<float>(count));
  for (size_t b = 0; b < 2; ++b)
    for (size_t i = 0; i < count; ++i) host[b][i] = input(rank, b, i);
  // The exact sum of the first buffer: the compressed calls must not give it.
  std::vector<float> exact(count, 0.0f);
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i) exact[i] += input(r, 0, i);
  if (op == ncclAvg)
    for (float& e : exact) e /= float(n);
  void* dev[2] = {nullptr, nullptr};
  void* out = nullptr;
  for (void** p : {&dev[0], &dev[1], &out})
    if (ncclMemAlloc(p, bytes) != ncclSuccess) return complain(rank, ncclGetLastError(comm));
  for (size_t b = 0; b < 2; ++b) std::memcpy(dev[b], host[b].data(), bytes);
  int failures = 0;
  std::vector<float> want(count);
  for (int round = 0; round < 3; ++round)
    for (size_t b = 0; b < 2; ++b) {
      if (reset_round >= 0 && b == 0) setenv("DEEPCOMM_COMPRESS_RESET", round < reset_round ? "epoch 0" : "epoch 1", 1);
      const int encodes = device.encodes();
      if (ncclAllReduce(host[b].data(), want.data(), count, ncclFloat, op, comm, nullptr) != ncclSuccess ||
          ncclAllReduce(dev[b], out, count, ncclFloat, op, comm, stream) != ncclSuccess ||
          wait_for_stream(device, stream, comm, 30000) != ncclSuccess)
        return complain(rank, ncclGetLastError(comm));
      if (device.encodes() != encodes + 1)
        failures += complain(rank, "the device all-reduce was not encoded by the device's codec");
      if (std::memcmp(out, want.data(), bytes) != 0)
        failures += complain(rank, "round " + std::to_string(round) + ", buffer " + std::to_string(b) +
                                       ": the device all-reduce differs from the host one");
      // Not one rounding away from the exact sum (a sum in another order) but q8's or top-k's error.
      const auto far = [&](size_t i) { return std::fabs(want[i] - exact[i]) > 1e-3f * (std::fabs(exact[i]) + 1.0f); };
      size_t off = 0;
      for (size_t i = 0; i < count; ++i) off += far(i);
      if (round == 0 && b == 0 && off < count / 100)
        failures += complain(rank, "the host all-reduce gave about the exact sum: it was not compressed");
    }
  for (void* p : {dev[0], dev[1], out}) ncclMemFree(p);
  return failures;
}

}  // namespace dctest
