#include "base/config_table.h"

#include <strings.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>
#include <utility>

#include "base/log.h"

namespace dc::config {

namespace {

const char* type_name(Type type) {
  switch (type) {
    case Type::Integer: return "an integer";
    case Type::Flag: return "a flag";
    case Type::Choice: return "a choice";
    case Type::Text: return "text";
  }
  return "?";
}

void require_type(const Setting& s, Type type) {
  if (s.type != type)
    fail(dcInternalError, std::string("DeepComm: setting ") + s.name + " is declared as " + type_name(s.type) +
                              ", read as " + type_name(type));
}

std::vector<std::string_view> words_of(const Setting& s) {
  std::vector<std::string_view> words;
  std::string_view rest = s.choices;
  while (!rest.empty()) {
    const size_t bar = rest.find('|');
    words.push_back(rest.substr(0, bar));
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 1);
  }
  return words;
}

// A bad value: throws (OnBad::Fail) or warns once per variable and value (OnBad::Warn).
void report_bad(const Setting& s, const std::string& value) {
  std::string message = std::string("DeepComm: ") + s.name + "=" + value + " is not " + expected(s);
  if (s.on_bad == OnBad::Fail) fail(dcInvalidArgument, message);
  static std::mutex mutex;
  static std::set<std::string> told;
  std::lock_guard<std::mutex> lock(mutex);
  if (told.insert(std::string(s.name) + "=" + value).second)
    DC_WARN("%s; using the default (%s)", message.c_str(), s.default_text);
}

// The declared default of a setting that has a fixed one, parsed by `parse`.
template <class Parse>
auto fixed_default(const Setting& s, Parse parse) {
  auto value = s.computed_default ? std::nullopt : parse(s, s.default_text);
  if (!value)
    fail(dcInternalError, std::string("DeepComm: setting ") + s.name + " has no fixed default (\"" + s.default_text +
                              "\"): read it with the _if_set form");
  return *value;
}

// The environment's value parsed by `parse`; a bad one is reported (and, with OnBad::Warn, unset).
template <class Parse>
auto read_if_set(const Setting& s, Parse parse) -> decltype(parse(s, std::string_view())) {
  const std::optional<std::string> value = raw(s);
  if (!value) return std::nullopt;
  auto parsed = parse(s, *value);
  if (!parsed) report_bad(s, *value);
  return parsed;
}

}  // namespace

std::optional<std::string> raw(const Setting& s) {
  const char* value = std::getenv(s.name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::optional<int64_t> parse_integer(const Setting& s, std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value < s.min || value > s.max) return std::nullopt;
  return value;
}

std::optional<bool> parse_flag(const Setting&, std::string_view text) {
  if (text == "0") return false;
  if (text == "1") return true;
  return std::nullopt;
}

std::optional<int> parse_choice(const Setting& s, std::string_view text) {
  const std::vector<std::string_view> words = words_of(s);
  for (size_t i = 0; i < words.size(); ++i) {
    const bool same =
        s.any_case ? words[i].size() == text.size() && strncasecmp(words[i].data(), text.data(), text.size()) == 0
                   : words[i] == text;
    if (same) return static_cast<int>(i);
  }
  return std::nullopt;
}

std::string expected(const Setting& s) {
  switch (s.type) {
    case Type::Integer: return "an integer in [" + std::to_string(s.min) + ", " + std::to_string(s.max) + "]";
    case Type::Flag: return "0 or 1";
    case Type::Choice: {
      std::string list;
      for (std::string_view word : words_of(s)) list += (list.empty() ? "" : ", ") + std::string(word);
      return std::string("one of ") + list + (s.any_case ? " (any case)" : "");
    }
    case Type::Text: return "text";
  }
  return "?";
}

std::optional<int64_t> integer_if_set(const Setting& s) {
  require_type(s, Type::Integer);
  return read_if_set(s, parse_integer);
}

int64_t integer(const Setting& s) {
  if (auto value = integer_if_set(s)) return *value;
  return fixed_default(s, parse_integer);
}

std::optional<bool> flag_if_set(const Setting& s) {
  require_type(s, Type::Flag);
  return read_if_set(s, parse_flag);
}

bool flag(const Setting& s) {
  if (auto value = flag_if_set(s)) return *value;
  return fixed_default(s, parse_flag);
}

std::optional<int> choice_if_set(const Setting& s) {
  require_type(s, Type::Choice);
  return read_if_set(s, parse_choice);
}

int choice(const Setting& s) {
  if (auto value = choice_if_set(s)) return *value;
  return fixed_default(s, parse_choice);
}

std::optional<std::string> text(const Setting& s) {
  require_type(s, Type::Text);
  return raw(s);
}

std::string value_text(const Setting& s) {
  if (auto value = raw(s)) return s.secret ? "(set, not shown)" : *value;
  return s.default_text;
}

int64_t integer_value_of(const Setting& s) {
  if (s.type == Type::Integer) return integer(s);
  if (s.type == Type::Flag) return flag(s) ? 1 : 0;
  fail(dcInvalidArgument, std::string("DeepComm: setting ") + s.name + " is " + type_name(s.type) + ", not a number");
}

void fail_does_not_fit(const Setting& s, int64_t value, bool is_signed, int bits) {
  fail(dcInvalidArgument, std::string("DeepComm: ") + s.name + "=" + std::to_string(value) + " does not fit in " +
                              (is_signed ? "a signed " : "an unsigned ") + std::to_string(bits) + "-bit integer");
}

Registry& Registry::instance() {
  static Registry registry;  // built at first use: safe from any static initializer
  return registry;
}

void Registry::add(Table table) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Setting* s : table) {
    auto same_name = [s](const Setting* known) { return std::string_view(known->name) == s->name; };
    auto known = std::find_if(settings_.begin(), settings_.end(), same_name);
    if (known == settings_.end()) {
      settings_.push_back(s);
    } else if (*known != s) {
      fail(dcInternalError, std::string("DeepComm: setting ") + s->name + " is declared twice");
    }
  }
  std::sort(settings_.begin(), settings_.end(),
            [](const Setting* a, const Setting* b) { return std::string_view(a->name) < b->name; });
}

const Setting* Registry::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Setting* s : settings_)
    if (name == s->name) return s;
  return nullptr;
}

std::vector<const Setting*> Registry::all() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return settings_;
}

std::vector<std::string> Registry::keys() const {
  std::vector<std::string> names;
  for (const Setting* s : all()) names.emplace_back(s->name);
  return names;
}

std::string Registry::dump() const {
  std::string text;
  for (const Setting* s : all())
    text += std::string(s->name) + "=" + value_text(*s) + (raw(*s) ? " (environment)\n" : " (default)\n");
  return text;
}

}  // namespace dc::config
