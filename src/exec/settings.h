// The settings src/exec reads (base/config_table.h). docs/configuration.md documents them.
#pragma once

#include "base/config_table.h"

namespace dc::settings {

inline constexpr config::Setting kCodecThreads{.name = "DEEPCOMM_CODEC_THREADS",
                                               .type = config::Type::Integer,
                                               .default_text = "one per two cores, 1 … 4",
                                               .computed_default = true,
                                               .min = 1,
                                               .max = 64,
                                               .on_bad = config::OnBad::Warn,
                                               .doc = "Worker threads of the process's codec pool."};

inline constexpr const config::Setting* kExecTable[] = {&kCodecThreads};

}  // namespace dc::settings
