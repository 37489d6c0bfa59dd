// Logging controlled by NCCL_DEBUG=WARN|INFO|TRACE (DEEPCOMM_DEBUG overrides). Messages go to
// stderr prefixed with host, pid and rank context.
#pragma once

#include <cstdarg>

namespace dc {

enum class LogLevel { None = 0, Warn = 1, Info = 2, Trace = 3 };

LogLevel log_level();
// Re-reads the environment (ncclResetDebugInit).
void reset_log_level();
void log_message(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace dc

#define DC_WARN(...) ::dc::log_message(::dc::LogLevel::Warn, __VA_ARGS__)
#define DC_INFO(...)                                                                                     \
  do {                                                                                                   \
    if (::dc::log_level() >= ::dc::LogLevel::Info) ::dc::log_message(::dc::LogLevel::Info, __VA_ARGS__); \
  } while (0)
#define DC_TRACE(...)                                                                                      \
  do {                                                                                                     \
    if (::dc::log_level() >= ::dc::LogLevel::Trace) ::dc::log_message(::dc::LogLevel::Trace, __VA_ARGS__); \
  } while (0)
