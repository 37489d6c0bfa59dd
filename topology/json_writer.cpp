#include "topology/json_writer.h"

#include <charconv>

namespace dc::topo {

std::string json_string(std::string_view text) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (byte < 0x20) {
      out += "\\u00";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  // Plain decimals read best ("1000000", "0.0205"); exponents only where those get long.
  char text[40];
  auto fixed = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed);
  if (fixed.ec == std::errc()) return std::string(text, fixed.ptr);
  auto shortest = std::to_chars(text, text + sizeof text, value);
  return std::string(text, shortest.ec == std::errc() ? shortest.ptr : text);
}

}  // namespace dc::topo
