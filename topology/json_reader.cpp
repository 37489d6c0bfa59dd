#include "topology/json_reader.h"

#include <unordered_set>

namespace dc::topo {
namespace {

class Reader {
 public:
  Reader(std::string_view text, int max_depth) : text_(text), max_depth_(max_depth) {}

  JsonValue document() {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
    skip_space();
    JsonValue value = parse_value(0);
    skip_space();
    if (pos_ != text_.size()) error("unexpected text after the JSON value");
    return value;
  }

 private:
  int column() const { return static_cast<int>(pos_ - line_start_) + 1; }
  [[noreturn]] void error(const std::string& what) const { throw JsonSyntaxError(line_, column(), what); }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }

  void skip_space() {
    while (!at_end()) {
      const char ch = text_[pos_];
      if (ch == '\n') {
        ++pos_;
        ++line_;
        line_start_ = pos_;
      } else if (ch == ' ' || ch == '\t' || ch == '\r') {
        ++pos_;
      } else {
        break;
      }
    }
  }

  void expect_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) error("unknown literal (expected a value)");
    pos_ += word.size();
  }

  JsonValue parse_value(int depth) {
    JsonValue value;
    value.line = line_;
    const char ch = peek();
    if (ch == '{' || ch == '[') {
      if (depth >= max_depth_) error("nesting deeper than " + std::to_string(max_depth_) + " levels");
      if (ch == '{') {
        parse_object(value, depth + 1);
      } else {
        parse_array(value, depth + 1);
      }
    } else if (ch == '"') {
      value.kind = JsonValue::Kind::String;
      value.text = parse_string();
    } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
      value.kind = JsonValue::Kind::Number;
      value.text = parse_number();
    } else if (ch == 't') {
      expect_word("true");
      value.kind = JsonValue::Kind::Bool;
      value.boolean = true;
    } else if (ch == 'f') {
      expect_word("false");
      value.kind = JsonValue::Kind::Bool;
    } else if (ch == 'n') {
      expect_word("null");
    } else if (at_end()) {
      error("unexpected end of input (expected a value)");
    } else {
      error(std::string("unexpected character '") + printable(ch) + "' (expected a value)");
    }
    return value;
  }

  static std::string printable(char ch) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte >= 0x20 && byte < 0x7f) return std::string(1, ch);
    static const char* hex = "0123456789abcdef";
    return std::string("\\x") + hex[byte >> 4] + hex[byte & 0xf];
  }

  void parse_object(JsonValue& value, int depth) {
    value.kind = JsonValue::Kind::Object;
    ++pos_;  // '{'
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return;
    }
    std::unordered_set<std::string> seen;
    while (true) {
      if (peek() != '"') error("expected a member name in double quotes");
      const int key_line = line_;
      const int key_column = column();
      std::string key = parse_string();
      if (!seen.insert(key).second) {
        throw JsonSyntaxError(key_line, key_column, "duplicate member \"" + key + "\"");
      }
      skip_space();
      if (peek() != ':') error("expected ':' after a member name");
      ++pos_;
      skip_space();
      value.keys.push_back(std::move(key));
      value.items.push_back(parse_value(depth));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() == '}') {
        ++pos_;
        return;
      } else {
        error("expected ',' or '}' after an object member");
      }
    }
  }

  void parse_array(JsonValue& value, int depth) {
    value.kind = JsonValue::Kind::Array;
    ++pos_;  // '['
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return;
    }
    while (true) {
      value.items.push_back(parse_value(depth));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() == ']') {
        ++pos_;
        return;
      } else {
        error("expected ',' or ']' after an array element");
      }
    }
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, kept as written.
  std::string parse_number() {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t first = pos_;
      while (peek() >= '0' && peek() <= '9') ++pos_;
      return pos_ - first;
    };
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
      if (peek() >= '0' && peek() <= '9') error("numbers must not have leading zeros");
    } else if (digits() == 0) {
      error("expected a digit");
    }
    if (peek() == '.') {
      ++pos_;
      if (digits() == 0) error("expected a digit after the decimal point");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (digits() == 0) error("expected a digit in the exponent");
    }
    return std::string(text_.substr(start, pos_ - start));
  }

  unsigned hex4() {
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      const char ch = peek();
      unsigned digit;
      if (ch >= '0' && ch <= '9') {
        digit = static_cast<unsigned>(ch - '0');
      } else if (ch >= 'a' && ch <= 'f') {
        digit = static_cast<unsigned>(ch - 'a' + 10);
      } else if (ch >= 'A' && ch <= 'F') {
        digit = static_cast<unsigned>(ch - 'A' + 10);
      } else {
        error("expected four hex digits after \\u");
      }
      code = code * 16 + digit;
      ++pos_;
    }
    return code;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  void escape(std::string& out) {
    ++pos_;  // '\\'
    const char ch = peek();
    ++pos_;
    switch (ch) {
      case '"': out += '"'; return;
      case '\\': out += '\\'; return;
      case '/': out += '/'; return;
      case 'b': out += '\b'; return;
      case 'f': out += '\f'; return;
      case 'n': out += '\n'; return;
      case 'r': out += '\r'; return;
      case 't': out += '\t'; return;
      case 'u': break;
      default: --pos_; error("unknown escape in a string");
    }
    unsigned code = hex4();
    if (code >= 0xDC00 && code <= 0xDFFF) error("unpaired low surrogate in a \\u escape");
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (text_.substr(pos_, 2) != "\\u") error("high surrogate without its low surrogate");
      pos_ += 2;
      const unsigned low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) error("high surrogate without its low surrogate");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, code);
  }

  // One UTF-8 sequence, copied; overlong forms, surrogates and code points past U+10FFFF are errors.
  void utf8_sequence(std::string& out) {
    const auto lead = static_cast<unsigned char>(text_[pos_]);
    int length;
    unsigned min;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2, min = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3, min = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4, min = 0x10000;
    } else {
      error("invalid UTF-8 in a string");
    }
    if (pos_ + static_cast<size_t>(length) > text_.size()) error("invalid UTF-8 in a string");
    unsigned code = lead & (0x7F >> length);
    for (int i = 1; i < length; ++i) {
      const auto next = static_cast<unsigned char>(text_[pos_ + static_cast<size_t>(i)]);
      if ((next & 0xC0) != 0x80) error("invalid UTF-8 in a string");
      code = (code << 6) | (next & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      error("invalid UTF-8 in a string");
    }
    out.append(text_.substr(pos_, static_cast<size_t>(length)));
    pos_ += static_cast<size_t>(length);
  }

  std::string parse_string() {
    ++pos_;  // '"'
    std::string out;
    while (true) {
      if (at_end()) error("unterminated string");
      const auto ch = static_cast<unsigned char>(text_[pos_]);
      if (ch == '"') {
        ++pos_;
        return out;
      }
      if (ch == '\\') {
        escape(out);
      } else if (ch < 0x20) {
        error(ch == '\n' ? "unterminated string (a line break inside it)"
                         : "control character in a string (escape it)");
      } else if (ch < 0x80) {
        out += static_cast<char>(ch);
        ++pos_;
      } else {
        utf8_sequence(out);
      }
    }
  }

  std::string_view text_;
  int max_depth_;
  size_t pos_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;
};

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return &items[i];
  }
  return nullptr;
}

const char* json_kind_name(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::Null: return "null";
    case JsonValue::Kind::Bool: return "a boolean";
    case JsonValue::Kind::Number: return "a number";
    case JsonValue::Kind::String: return "a string";
    case JsonValue::Kind::Array: return "an array";
    case JsonValue::Kind::Object: return "an object";
  }
  return "a value";
}

JsonValue parse_json(std::string_view text, int max_depth) { return Reader(text, max_depth).document(); }

}  // namespace dc::topo
