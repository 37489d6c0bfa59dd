// The ABI as NVIDIA's NCCL 2.30.7 headers declare it (PyPI's nvidia-nccl-cu13), with the host
// side of the device API. Compiled only when CMake found that package.
#define NCCL_OS_LINUX 1
#include <nccl.h>
#include <nccl_device/core.h>
#include <nccl_device/gin_barrier.h>
#include <nccl_device/impl/core__types.h>
#include <nccl_device/impl/gin_barrier__types.h>
#include <nccl_device/impl/ll_a2a__types.h>
#include <nccl_device/impl/lsa_barrier__types.h>
#include <nccl_device/ll_a2a.h>
#include <nccl_device/lsa_barrier.h>

#include "tests/nccl/collect_layout_entries.h"

LayoutEntries vendor230_layout() { return collect_layout_entries(); }
