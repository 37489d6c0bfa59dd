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
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return std::string(text, ec == std::errc() ? end : text);
}

}  // namespace dc::topo
