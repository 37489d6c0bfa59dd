// Rejects CUDA device memory until DeepComm has its GPU path.
#pragma once

namespace dc::nccl {

// Throws dc::Error(dcInvalidUsage) when pointer is device or managed memory according to the
// CUDA runtime. Without a CUDA runtime or device every pointer is host memory.
void require_host_memory(const void* pointer);

}  // namespace dc::nccl
