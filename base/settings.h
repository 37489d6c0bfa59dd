// The settings base/ reads (config_table.h): logging (log.cpp), the network interface every
// socket binds (net_interface.cpp) and the slice of a sleeping thread (wake_slice.cpp).
// docs/configuration.md documents them.
#pragma once

#include "base/config_table.h"

namespace dc::settings {

using config::OnBad;
using config::Setting;
using config::Type;

// Words in LogLevel's order, so a choice's index is its level; VERSION (NCCL's) logs as NONE.
inline constexpr const char* kLogLevels = "NONE|WARN|INFO|TRACE|VERSION";
inline constexpr Setting kDeepcommDebug{.name = "DEEPCOMM_DEBUG",
                                        .type = Type::Choice,
                                        .default_text = "WARN",
                                        .choices = kLogLevels,
                                        .any_case = true,
                                        .on_bad = OnBad::Warn,
                                        .doc = "Logging to stderr; overrides NCCL_DEBUG."};
inline constexpr Setting kNcclDebug{.name = "NCCL_DEBUG",
                                    .type = Type::Choice,
                                    .default_text = "WARN",
                                    .choices = kLogLevels,
                                    .any_case = true,
                                    .on_bad = OnBad::Warn,
                                    .doc = "Logging to stderr (when DEEPCOMM_DEBUG is unset)."};

inline constexpr const char* kDefaultInterface =
    "first up interface that is neither loopback nor docker*, IPv4 before IPv6; else loopback";
inline constexpr Setting kDeepcommSocketIfname{.name = "DEEPCOMM_SOCKET_IFNAME",
                                               .default_text = kDefaultInterface,
                                               .doc = "The interface sockets bind; overrides NCCL_SOCKET_IFNAME."};
inline constexpr Setting kNcclSocketIfname{
    .name = "NCCL_SOCKET_IFNAME",
    .default_text = kDefaultInterface,
    .doc = "The interface sockets bind: prefixes, ^ to exclude, = for exact names."};

inline constexpr Setting kDeepcommWakeSliceUs{
    .name = "DEEPCOMM_WAKE_SLICE_US",
    .type = Type::Integer,
    .default_text = "100",
    .min = 0,
    .max = 100000,
    .doc = "Scheduling slice of a thread asleep in DeepComm, so a peer's message preempts a busy core (0: off)."};

inline constexpr const Setting* kBaseTable[] = {&kDeepcommDebug, &kNcclDebug, &kDeepcommSocketIfname,
                                                &kNcclSocketIfname, &kDeepcommWakeSliceUs};

}  // namespace dc::settings
