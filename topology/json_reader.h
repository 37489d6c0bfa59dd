// A small strict JSON reader (RFC 8259) for the topology file. Every value keeps the line it
// starts on so that schema errors can name it; nesting depth is bounded so that hostile input
// cannot exhaust the stack. Strings must be valid UTF-8; duplicate object keys are errors.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dc::topo {

struct JsonValue {
  enum class Kind : uint8_t { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  int line = 0;
  bool boolean = false;
  std::string text;               // a string's decoded value, or a number's literal as written
  std::vector<JsonValue> items;   // array elements, or object member values
  std::vector<std::string> keys;  // object member names, parallel to items

  // The member named key of an object, or nullptr.
  const JsonValue* find(std::string_view key) const;
};

const char* json_kind_name(JsonValue::Kind kind);

class JsonSyntaxError : public std::runtime_error {
 public:
  JsonSyntaxError(int line, int column, const std::string& what)
      : std::runtime_error(what), line_(line), column_(column) {}
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  int line_;
  int column_;
};

constexpr int kJsonMaxDepth = 64;

// One JSON value with only whitespace around it (a leading UTF-8 byte order mark is skipped).
// Throws JsonSyntaxError with the 1-based line and byte column of the problem.
JsonValue parse_json(std::string_view text, int max_depth = kJsonMaxDepth);

}  // namespace dc::topo
