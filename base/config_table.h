// The configuration table's helper: every DEEPCOMM_* variable, and every NCCL_* one DeepComm
// honours, is declared once as a Setting (name, type, default, range, one line of doc) in the table
// of the room that reads it (<room>/settings.h), and read only through the functions here: this file
// is the one place that calls getenv for them. The process-wide Registry lists the declared settings
// by key, for the documentation test and for NCCL's parameter API (get by key, list, dump).
// docs/configuration.md documents every setting; tests/config checks that the two agree.
#pragma once

#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace dc::config {

// Integer: decimal, in [min, max]. Flag: 0 or 1. Choice: one of the words in `choices`.
// Text: any string, parsed (if at all) by the code that reads it.
enum class Type { Integer, Flag, Choice, Text };

// What a value that does not parse does: Fail throws dc::Error(dcInvalidArgument) naming the
// variable, its value and what was expected; Warn logs that once per value and uses the default.
enum class OnBad { Fail, Warn };

// Tables are constexpr arrays of these (constant-initialized: no static-initialization order).
struct Setting {
  const char* name;
  Type type = Type::Text;
  // The default as docs/configuration.md states it. For Integer, Flag and Choice settings without
  // computed_default it is a valid value, and what the readers return when the variable is unset.
  const char* default_text = "unset";
  bool computed_default = false;  // default_text only describes it (computed by the reader, or none)
  int64_t min = 0;                // Integer: the inclusive range
  int64_t max = 0;
  const char* choices = "";  // Choice: accepted words separated by '|'; a value is its index
  bool any_case = false;     // Choice: words match ignoring case
  OnBad on_bad = OnBad::Fail;
  const char* doc = "";  // one line
  // A credential (a secret, or an id that carries one): value_text() and dump() never show it.
  bool secret = false;
};

using Table = std::span<const Setting* const>;

// The environment's value; nullopt when the variable is unset or empty (empty counts as unset).
std::optional<std::string> raw(const Setting& s);

// Pure parsers of a value against the declaration: nullopt when it does not parse or is out of range.
std::optional<int64_t> parse_integer(const Setting& s, std::string_view text);
std::optional<bool> parse_flag(const Setting& s, std::string_view text);
std::optional<int> parse_choice(const Setting& s, std::string_view text);
// What a value must be, for messages ("an integer in [64, 1073741824]", "one of auto, shm, ...").
std::string expected(const Setting& s);

// Typed readers: the environment's value, or (unset, or bad with OnBad::Warn) the default. The
// _if_set forms return nullopt instead of the default, for settings whose default is computed.
// Reading a setting as another type than it is declared fails with dcInternalError.
std::optional<int64_t> integer_if_set(const Setting& s);
int64_t integer(const Setting& s);
std::optional<bool> flag_if_set(const Setting& s);
bool flag(const Setting& s);
std::optional<int> choice_if_set(const Setting& s);
int choice(const Setting& s);
std::optional<std::string> text(const Setting& s);

// The value as text: the environment's, else default_text; "(set, not shown)" for a secret that is set.
std::string value_text(const Setting& s);

// An Integer or Flag setting's value (as integer()/flag()) converted to T, failing with
// dcInvalidArgument when it does not fit or the setting is not one of those (NCCL's
// ncclParamGetI8 ... U64 look settings up by key).
template <class T>
T integer_as(const Setting& s);

// Every declared setting of the process, by name. Rooms' tables are added explicitly (src/core's
// register_settings); a name declared twice fails with dcInternalError.
class Registry {
 public:
  static Registry& instance();

  void add(Table table);
  const Setting* find(std::string_view name) const;
  std::vector<const Setting*> all() const;  // sorted by name
  std::vector<std::string> keys() const;    // the names, sorted
  // One line per setting, sorted: "NAME=value (environment)" or "NAME=value (default)".
  std::string dump() const;

 private:
  mutable std::mutex mutex_;
  std::vector<const Setting*> settings_;
};

// ---- implementation of the template ----

int64_t integer_value_of(const Setting& s);  // integer(), or flag() as 0/1; fails for other types
[[noreturn]] void fail_does_not_fit(const Setting& s, int64_t value, bool is_signed, int bits);

template <class T>
T integer_as(const Setting& s) {
  static_assert(std::numeric_limits<T>::is_integer, "integer_as converts to an integer type");
  using Limits = std::numeric_limits<T>;
  const int64_t v = integer_value_of(s);
  bool fits;
  if constexpr (Limits::is_signed)
    fits = v >= static_cast<int64_t>(Limits::min()) && v <= static_cast<int64_t>(Limits::max());
  else fits = v >= 0 && static_cast<uint64_t>(v) <= static_cast<uint64_t>(Limits::max());
  if (!fits) fail_does_not_fit(s, v, Limits::is_signed, Limits::digits + (Limits::is_signed ? 1 : 0));
  return static_cast<T>(v);
}

}  // namespace dc::config
