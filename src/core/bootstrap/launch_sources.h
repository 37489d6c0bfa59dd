// The launchers launch_info_from_env understands, one function each: nullopt when that launcher's
// variables are absent, dc::Error when they are present but unusable.
#pragma once

#include <optional>

#include "src/core/bootstrap.h"

namespace dc {

// DEEPCOMM_RANK, DEEPCOMM_NRANKS, DEEPCOMM_UNIQUE_ID (hex), set by deepcomm-run.
std::optional<LaunchInfo> launch_info_from_deepcomm_run();

// torchrun's RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT. MASTER_PORT is torch's own store, so rank
// 0 hosts the DeepComm root on MASTER_ADDR:MASTER_PORT+1.
std::optional<LaunchInfo> launch_info_from_torchrun();

#ifdef DEEPCOMM_HAVE_PMIX
// Under mpirun/srun (PMIX_RANK or PMIX_NAMESPACE set): rank 0 makes the id and publishes it through
// PMIx (key "deepcomm.uid.<n>", n counting the calls in this process); the others fetch it.
std::optional<LaunchInfo> launch_info_from_pmix(int timeout_ms);
#endif

// The integer in variable `name`, in [min, max]; throws dc::Error(dcInvalidUsage) otherwise.
int env_int(const char* name, int min, int max);

}  // namespace dc
