// The settings the NCCL library (src/nccl) reads (base/config_table.h). docs/configuration.md
// documents them. The other NCCL_* variables DeepComm honours belong to the rooms that read them.
#pragma once

#include "base/config_table.h"

namespace dc::settings {

inline constexpr config::Setting kNcclCommBlocking{.name = "NCCL_COMM_BLOCKING",
                                                   .type = config::Type::Flag,
                                                   .default_text = "1",
                                                   .on_bad = config::OnBad::Warn,
                                                   .doc = "Default of ncclConfig_t.blocking."};

inline constexpr config::Setting kDevicePlugin{
    .name = "DEEPCOMM_DEVICE_PLUGIN",
    .type = config::Type::Text,
    .default_text = "libdeepcomm-cuda.so once the CUDA runtime sees a device",
    .computed_default = true,
    .doc = "The device plugin that serves device buffers (a file name for the loader's search path, or a path)."};

inline constexpr const config::Setting* kNcclTable[] = {&kNcclCommBlocking, &kDevicePlugin};

}  // namespace dc::settings
