// The strict JSON reader: values, lines, and every kind of syntax error with its position.
#include <gtest/gtest.h>

#include "topology/json_reader.h"

namespace dc::topo {
namespace {

using Kind = JsonValue::Kind;

TEST(JsonReader, ValuesAndLines) {
  const JsonValue v =
      parse_json("{\n  \"a\": [1, -2.5e3, true],\n  \"b\": {\"c\": null},\n  \"d\": \"x\\u00e9\\ud83d\\ude00\\n\"\n}");
  ASSERT_EQ(v.kind, Kind::Object);
  EXPECT_EQ(v.line, 1);
  const JsonValue* a = v.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->line, 2);
  ASSERT_EQ(a->items.size(), 3u);
  EXPECT_EQ(a->items[1].text, "-2.5e3");
  EXPECT_TRUE(a->items[2].boolean);
  EXPECT_EQ(v.find("b")->line, 3);
  EXPECT_EQ(v.find("b")->find("c")->kind, Kind::Null);
  EXPECT_EQ(v.find("d")->text, "x\xC3\xA9\xF0\x9F\x98\x80\n");
  EXPECT_EQ(v.find("missing"), nullptr);
  EXPECT_EQ(parse_json("\xEF\xBB\xBF 7 ").text, "7");  // byte order mark skipped
  EXPECT_EQ(parse_json("\"caf\xC3\xA9\"").text, "caf\xC3\xA9");
}

struct SyntaxCase {
  const char* text;
  int line;
  int column;
  const char* message;
};

TEST(JsonReader, SyntaxErrorsNameLineAndColumn) {
  const SyntaxCase cases[] = {
      {"", 1, 1, "unexpected end of input"},
      {"{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3, "expected ',' or '}'"},
      {"[1, 2,]", 1, 7, "unexpected character ']'"},
      {"[1 2]", 1, 4, "expected ',' or ']'"},
      {"{\"a\" 1}", 1, 6, "expected ':'"},
      {"{a: 1}", 1, 2, "member name in double quotes"},
      {"{\"a\": 1,}", 1, 9, "member name in double quotes"},
      {"{\"a\": 1, \"a\": 2}", 1, 10, "duplicate member \"a\""},
      {"01", 1, 2, "leading zeros"},
      {"-", 1, 2, "expected a digit"},
      {"1.", 1, 3, "after the decimal point"},
      {"1e+", 1, 4, "in the exponent"},
      {".5", 1, 1, "unexpected character '.'"},
      {"NaN", 1, 1, "unexpected character 'N'"},
      {"tru", 1, 1, "unknown literal"},
      {"nul", 1, 1, "unknown literal"},
      {"\"abc", 1, 5, "unterminated string"},
      {"\"a\nb\"", 1, 3, "line break"},
      {"\"a\tb\"", 1, 3, "control character"},
      {"\"\\x\"", 1, 3, "unknown escape"},
      {"\"\\u12G4\"", 1, 6, "four hex digits"},
      {"\"\\udc00\"", 1, 8, "unpaired low surrogate"},
      {"\"\\ud800x\"", 1, 8, "without its low surrogate"},
      {"\"\\ud800\\u0041\"", 1, 14, "without its low surrogate"},
      {"\"\xC3\"", 1, 2, "invalid UTF-8"},
      {"\"\xC0\xAF\"", 1, 2, "invalid UTF-8"},          // overlong '/'
      {"\"\xED\xA0\x80\"", 1, 2, "invalid UTF-8"},      // encoded surrogate
      {"\"\xF4\x90\x80\x80\"", 1, 2, "invalid UTF-8"},  // past U+10FFFF
      {"\"\xFF\"", 1, 2, "invalid UTF-8"},
      {"{} {}", 1, 4, "after the JSON value"},
      {"[1]\n\n  x", 3, 3, "after the JSON value"},
      {"[\r\n1,\r\n@]", 3, 1, "unexpected character '@'"},
      {"[\x01]", 1, 2, "unexpected character '\\x01'"},
  };
  for (const SyntaxCase& c : cases) {
    try {
      parse_json(c.text);
      ADD_FAILURE() << "parsed: " << c.text;
    } catch (const JsonSyntaxError& e) {
      EXPECT_EQ(e.line(), c.line) << c.text << ": " << e.what();
      EXPECT_EQ(e.column(), c.column) << c.text << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.text << ": " << e.what();
    }
  }
}

TEST(JsonReader, NestingIsBounded) {
  const std::string ok = std::string(kJsonMaxDepth, '[') + std::string(kJsonMaxDepth, ']');
  EXPECT_NO_THROW(parse_json(ok));
  const std::string deep = std::string(kJsonMaxDepth + 1, '[') + std::string(kJsonMaxDepth + 1, ']');
  try {
    parse_json(deep);
    FAIL() << "nesting deeper than the bound parsed";
  } catch (const JsonSyntaxError& e) {
    EXPECT_EQ(e.column(), kJsonMaxDepth + 1);
    EXPECT_NE(std::string(e.what()).find("nesting deeper than 64"), std::string::npos) << e.what();
  }
  // A million unclosed brackets neither recurse that deep nor take long.
  EXPECT_THROW(parse_json(std::string(1 << 20, '{')), JsonSyntaxError);
  EXPECT_THROW(parse_json(std::string(1 << 20, '[')), JsonSyntaxError);
}

TEST(JsonReader, HugeNumbersKeepTheirLiteral) {
  const JsonValue v = parse_json("[1e999999, -123456789012345678901234567890]");
  EXPECT_EQ(v.items[0].text, "1e999999");
  EXPECT_EQ(v.items[1].text, "-123456789012345678901234567890");
}

}  // namespace
}  // namespace dc::topo
