#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace dc {

namespace {

std::atomic<int> g_level{-1};

LogLevel parse_level() {
  const char* v = std::getenv("DEEPCOMM_DEBUG");
  if (!v || !*v) v = std::getenv("NCCL_DEBUG");
  if (!v || !*v) return LogLevel::Warn;
  if (!strcasecmp(v, "TRACE")) return LogLevel::Trace;
  if (!strcasecmp(v, "INFO")) return LogLevel::Info;
  if (!strcasecmp(v, "WARN")) return LogLevel::Warn;
  if (!strcasecmp(v, "NONE") || !strcasecmp(v, "VERSION")) return LogLevel::None;
  return LogLevel::Warn;
}

}  // namespace

LogLevel log_level() {
  int l = g_level.load(std::memory_order_relaxed);
  if (l < 0) {
    l = static_cast<int>(parse_level());
    g_level.store(l, std::memory_order_relaxed);
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
  fprintf(stderr, "%s:%d DeepComm %s %s\n", host, static_cast<int>(getpid()),
          names[static_cast<int>(level)], text);
}

}  // namespace dc
