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

// Words in UcxInPlace's order (ucx_policy.h).
inline constexpr config::Setting kUcxInPlace{
    .name = "DEEPCOMM_UCX_IN_PLACE",
    .type = config::Type::Choice,
    .default_text = "auto",
    .choices = "auto|always|never",
    .doc = "Which UCX connections move ordinary memory in place (registration cache) instead of staging it."};

inline constexpr const config::Setting* kTransportsTable[] = {&kShmCma, &kUcxInPlace};

}  // namespace dc::settings
