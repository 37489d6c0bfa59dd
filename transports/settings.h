// The settings transports/ reads (base/config_table.h). docs/configuration.md documents them.
#pragma once

#include "base/config_table.h"

namespace dc::settings {

inline constexpr config::Setting kShmCma{
    .name = "DEEPCOMM_SHM_CMA",
    .type = config::Type::Flag,
    .default_text = "probed",
    .computed_default = true,
    .on_bad = config::OnBad::Warn,
    .doc = "0 turns single copy (cross-memory attach) off: large messages go through a shared segment."};

inline constexpr const config::Setting* kTransportsTable[] = {&kShmCma};

}  // namespace dc::settings
