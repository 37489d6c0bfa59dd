// Runs a kernel body (element_kernels.h) on the CPU over every block and thread of a grid, as a
// GPU would run its __global__ function, so the tests check the bodies' partition (every element
// exactly once: head, packs, tail, grid-stride) without a GPU. Sequential runs the threads one
// after the other; Threads gives each emulated thread an OS thread of its own, so that
// ThreadSanitizer sees two threads that touch the same element (docs/gpu.md). Host code only.
#pragma once

#include <cstdint>
#include <thread>
#include <vector>

#include "kernels/element_kernels.h"

namespace dc::kernels {

struct GridShape {
  uint32_t blocks = 1;
  uint32_t threads = 1;  // per block
};

enum class EmulatorMode { Sequential, Threads };

// Calls body(ThreadCoords) for every thread of the grid.
template <class Body>
void emulate_grid(GridShape grid, EmulatorMode mode, const Body& body) {
  if (mode == EmulatorMode::Sequential) {
    for (uint32_t b = 0; b < grid.blocks; ++b)
      for (uint32_t t = 0; t < grid.threads; ++t) body(ThreadCoords{b, grid.blocks, t, grid.threads});
    return;
  }
  std::vector<std::thread> running;
  running.reserve(size_t(grid.blocks) * grid.threads);
  for (uint32_t b = 0; b < grid.blocks; ++b)
    for (uint32_t t = 0; t < grid.threads; ++t)
      running.emplace_back([&body, coords = ThreadCoords{b, grid.blocks, t, grid.threads}] { body(coords); });
  for (std::thread& thread : running) thread.join();
}

// A kernel (element_kernels.h) over n elements, run through the emulator.
template <class Kernel>
void emulate_kernel(GridShape grid, EmulatorMode mode, const Kernel& kernel, size_t n) {
  emulate_grid(grid, mode, [&](const ThreadCoords& t) { run_kernel(t, kernel, n); });
}

}  // namespace dc::kernels
