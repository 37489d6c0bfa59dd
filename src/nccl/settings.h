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

inline constexpr const config::Setting* kNcclTable[] = {&kNcclCommBlocking};

}  // namespace dc::settings
