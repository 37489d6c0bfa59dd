#include "tools/common/options.h"

#include <cerrno>
#include <cstdlib>

#include "base/error.h"

namespace dc::tools {

uint64_t parse_size(const std::string& flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  uint64_t scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1ull << 10;
  if (*end == 'M' || *end == 'm') scale = 1ull << 20;
  if (*end == 'G' || *end == 'g') scale = 1ull << 30;
  // strtoull accepts "-1" (as a huge value) and leading spaces: only digits are sizes.
  const bool digits = *text >= '0' && *text <= '9';
  if (!digits || end == text || (scale != 1 && end[1] != '\0') || (scale == 1 && *end != '\0') || value == 0 ||
      errno == ERANGE || value > UINT64_MAX / scale)
    fail(dcInvalidArgument, flag + " needs a positive size, got \"" + text + "\"");
  return value * scale;
}

int parse_count(const std::string& flag, const char* text, int limit) {
  const uint64_t value = parse_size(flag, text);
  if (value > static_cast<uint64_t>(limit)) fail(dcInvalidArgument, flag + " is at most " + std::to_string(limit));
  return static_cast<int>(value);
}

std::string json_escaped(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out;
}

}  // namespace dc::tools
