#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <optional>
#include <string>

#include "base/settings.h"

namespace dc {

namespace {

std::atomic<int> g_level{-1};

// DEEPCOMM_DEBUG, else NCCL_DEBUG (base/settings.h). Parsed without the config helper's reporting,
// which logs: a bad value is returned in *bad and told once the level is known.
LogLevel parse_level(std::string* bad) {
  using namespace settings;
  std::optional<std::string> v = config::raw(kDeepcommDebug);
  const config::Setting* setting = &kDeepcommDebug;
  if (!v) {
    v = config::raw(kNcclDebug);
    setting = &kNcclDebug;
  }
  if (!v) return LogLevel::Warn;
  const std::optional<int> level = config::parse_choice(*setting, *v);
  if (!level) {
    *bad = std::string("DeepComm: ") + setting->name + "=" + *v + " is not " + config::expected(*setting) +
           "; using the default (WARN)";
    return LogLevel::Warn;
  }
  return *level <= static_cast<int>(LogLevel::Trace) ? static_cast<LogLevel>(*level) : LogLevel::None;
}

}  // namespace

LogLevel log_level() {
  int l = g_level.load(std::memory_order_relaxed);
  if (l < 0) {
    std::string bad;
    l = static_cast<int>(parse_level(&bad));
    g_level.store(l, std::memory_order_relaxed);
    if (!bad.empty()) DC_WARN("%s", bad.c_str());
  }
  return static_cast<LogLevel>(l);
}

void reset_log_level() { g_level.store(-1); }

void log_message(LogLevel level, const char* fmt, ...) {
  if (log_level() < level) return;
  static const char* names[] = {"", "WARN", "INFO", "TRACE"};
  char host[64] = {0};
  gethostname(host, sizeof host - 1);
  char text[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s:%d DeepComm %s %s\n", host, static_cast<int>(getpid()), names[static_cast<int>(level)], text);
}

}  // namespace dc
