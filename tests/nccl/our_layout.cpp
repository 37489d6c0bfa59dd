// The ABI as DeepComm's header declares it.
#define NCCL_OS_LINUX 1
#include "deepcomm/nccl.h"
#include "deepcomm/nccl_device_host.h"
#include "tests/nccl/collect_layout_entries.h"

LayoutEntries our_layout() { return collect_layout_entries(); }
