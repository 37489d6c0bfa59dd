// The ABI as NVIDIA's nccl.h (CUDA toolkit) declares it. Compiled only when that header exists.
#include <nccl.h>

#include "tests/nccl/collect_layout_entries.h"

LayoutEntries vendor_layout() { return collect_layout_entries(); }
