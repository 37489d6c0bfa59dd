// The configuration helper (base/config_table.h): each type parses what it should and rejects the
// rest, ranges are inclusive, bad values fail or warn as declared, unset means the default, and
// the registry finds, lists and dumps what was added.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "base/config_table.h"
#include "base/error.h"
#include "base/log.h"
#include "base/settings.h"
#include "src/core/bootstrap.h"
#include "src/core/config.h"
#include "src/core/settings.h"

namespace dc::config {
namespace {

// Settings of the tests' own, named so that no real variable is touched.
constexpr Setting kCount{
    .name = "DEEPCOMM_TEST_COUNT", .type = Type::Integer, .default_text = "8", .min = -4, .max = 1000, .doc = "test"};
constexpr Setting kBig{.name = "DEEPCOMM_TEST_BIG",
                       .type = Type::Integer,
                       .default_text = "300",
                       .min = 0,
                       .max = int64_t{1} << 40,
                       .doc = "test"};
constexpr Setting kLenient{.name = "DEEPCOMM_TEST_LENIENT",
                           .type = Type::Integer,
                           .default_text = "computed",
                           .computed_default = true,
                           .min = 1,
                           .max = 64,
                           .on_bad = OnBad::Warn,
                           .doc = "test"};
constexpr Setting kSwitch{.name = "DEEPCOMM_TEST_SWITCH", .type = Type::Flag, .default_text = "1", .doc = "test"};
constexpr Setting kMode{
    .name = "DEEPCOMM_TEST_MODE", .type = Type::Choice, .default_text = "b", .choices = "a|b|c-d", .doc = "test"};
constexpr Setting kLevel{.name = "DEEPCOMM_TEST_LEVEL",
                         .type = Type::Choice,
                         .default_text = "WARN",
                         .choices = "NONE|WARN|INFO",
                         .any_case = true,
                         .on_bad = OnBad::Warn,
                         .doc = "test"};
constexpr Setting kWords{.name = "DEEPCOMM_TEST_WORDS", .doc = "test"};
constexpr Setting kKey{.name = "DEEPCOMM_TEST_KEY", .doc = "test", .secret = true};

// Sets (or, with nullptr, unsets) a variable for the scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The dc::Error a call throws (code and message), or nullopt.
template <class F>
std::optional<Error> error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

TEST(ConfigTable, IntegersParseInRangeOnly) {
  EXPECT_EQ(parse_integer(kCount, "0"), 0);
  EXPECT_EQ(parse_integer(kCount, "-4"), -4);
  EXPECT_EQ(parse_integer(kCount, "1000"), 1000);
  EXPECT_EQ(parse_integer(kBig, "1099511627776"), int64_t{1} << 40);
  for (const char* bad : {"-5", "1001", "", "12a", "0x10", " 5", "5 ", "1e3", "99999999999999999999", "+5"})
    EXPECT_FALSE(parse_integer(kCount, bad)) << bad;
}

TEST(ConfigTable, FlagsAreZeroOrOne) {
  EXPECT_EQ(parse_flag(kSwitch, "0"), false);
  EXPECT_EQ(parse_flag(kSwitch, "1"), true);
  for (const char* bad : {"", "2", "true", "yes", "01"}) EXPECT_FALSE(parse_flag(kSwitch, bad)) << bad;
}

TEST(ConfigTable, ChoicesMatchWordsByPosition) {
  EXPECT_EQ(parse_choice(kMode, "a"), 0);
  EXPECT_EQ(parse_choice(kMode, "c-d"), 2);
  EXPECT_FALSE(parse_choice(kMode, "A"));  // exact case unless any_case
  EXPECT_FALSE(parse_choice(kMode, "c"));
  EXPECT_FALSE(parse_choice(kMode, ""));
  EXPECT_EQ(parse_choice(kLevel, "info"), 2);
  EXPECT_EQ(parse_choice(kLevel, "Warn"), 1);
  EXPECT_FALSE(parse_choice(kLevel, "WARNING"));
  EXPECT_EQ(expected(kMode), "one of a, b, c-d");
  EXPECT_EQ(expected(kCount), "an integer in [-4, 1000]");
}

TEST(ConfigTable, UnsetAndEmptyMeanTheDefault) {
  for (const char* value : {static_cast<const char*>(nullptr), ""}) {
    ScopedEnv count("DEEPCOMM_TEST_COUNT", value), sw("DEEPCOMM_TEST_SWITCH", value), mode("DEEPCOMM_TEST_MODE", value),
        words("DEEPCOMM_TEST_WORDS", value);
    EXPECT_FALSE(raw(kCount));
    EXPECT_EQ(integer(kCount), 8);
    EXPECT_FALSE(integer_if_set(kCount));
    EXPECT_TRUE(flag(kSwitch));
    EXPECT_EQ(choice(kMode), 1);
    EXPECT_FALSE(text(kWords));
    EXPECT_EQ(value_text(kWords), "unset");
  }
}

TEST(ConfigTable, SetValuesAreRead) {
  ScopedEnv count("DEEPCOMM_TEST_COUNT", "-3"), sw("DEEPCOMM_TEST_SWITCH", "0"), mode("DEEPCOMM_TEST_MODE", "c-d"),
      words("DEEPCOMM_TEST_WORDS", "any text: at all");
  EXPECT_EQ(integer(kCount), -3);
  EXPECT_EQ(integer_if_set(kCount), -3);
  EXPECT_FALSE(flag(kSwitch));
  EXPECT_EQ(flag_if_set(kSwitch), false);
  EXPECT_EQ(choice(kMode), 2);
  EXPECT_EQ(text(kWords), "any text: at all");
  EXPECT_EQ(value_text(kCount), "-3");
}

// A secret's value is read by its reader, never shown by value_text (the parameter API) or a dump.
TEST(ConfigTable, SecretsAreReadButNeverShown) {
  EXPECT_EQ(value_text(kKey), "unset");
  ScopedEnv key("DEEPCOMM_TEST_KEY", "hunter2");
  EXPECT_EQ(text(kKey), "hunter2");
  EXPECT_EQ(value_text(kKey), "(set, not shown)");
}

TEST(ConfigTable, BadValueFailsNamingVariableValueAndRange) {
  ScopedEnv count("DEEPCOMM_TEST_COUNT", "1001"), mode("DEEPCOMM_TEST_MODE", "e"), sw("DEEPCOMM_TEST_SWITCH", "on");
  auto e = error_of([] { integer(kCount); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), dcInvalidArgument);
  EXPECT_STREQ(e->what(), "DeepComm: DEEPCOMM_TEST_COUNT=1001 is not an integer in [-4, 1000]");
  e = error_of([] { choice(kMode); });
  ASSERT_TRUE(e);
  EXPECT_STREQ(e->what(), "DeepComm: DEEPCOMM_TEST_MODE=e is not one of a, b, c-d");
  e = error_of([] { flag(kSwitch); });
  ASSERT_TRUE(e);
  EXPECT_STREQ(e->what(), "DeepComm: DEEPCOMM_TEST_SWITCH=on is not 0 or 1");
}

TEST(ConfigTable, BadValueWithWarnUsesTheDefault) {
  ScopedEnv lenient("DEEPCOMM_TEST_LENIENT", "65"), level("DEEPCOMM_TEST_LEVEL", "loud");
  testing::internal::CaptureStderr();
  EXPECT_FALSE(integer_if_set(kLenient));
  EXPECT_FALSE(integer_if_set(kLenient));  // told once
  EXPECT_EQ(choice(kLevel), 1);
  const std::string told = testing::internal::GetCapturedStderr();
  EXPECT_NE(told.find("DEEPCOMM_TEST_LENIENT=65 is not an integer in [1, 64]; using the default (computed)"),
            std::string::npos)
      << told;
  EXPECT_EQ(told.find("DEEPCOMM_TEST_LENIENT"), told.rfind("DEEPCOMM_TEST_LENIENT")) << told;
  EXPECT_NE(told.find("DEEPCOMM_TEST_LEVEL=loud is not one of NONE, WARN, INFO (any case)"), std::string::npos) << told;
}

TEST(ConfigTable, ComputedDefaultHasNoValueToReturn) {
  ScopedEnv lenient("DEEPCOMM_TEST_LENIENT", nullptr);
  auto e = error_of([] { integer(kLenient); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), dcInternalError);
}

TEST(ConfigTable, ReadingAsAnotherTypeIsAnInternalError) {
  auto e = error_of([] { flag(kCount); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), dcInternalError);
  e = error_of([] { text(kMode); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), dcInternalError);
}

TEST(ConfigTable, IntegerAsChecksTheTargetTypesRange) {
  {
    ScopedEnv big("DEEPCOMM_TEST_BIG", "300");
    EXPECT_EQ(integer_as<int16_t>(kBig), 300);
    EXPECT_EQ(integer_as<uint64_t>(kBig), 300u);
    auto e = error_of([] { integer_as<int8_t>(kBig); });
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), dcInvalidArgument);
    EXPECT_STREQ(e->what(), "DeepComm: DEEPCOMM_TEST_BIG=300 does not fit in a signed 8-bit integer");
    EXPECT_TRUE(error_of([] { integer_as<uint8_t>(kBig); }));
  }
  {
    ScopedEnv count("DEEPCOMM_TEST_COUNT", "-4");
    EXPECT_EQ(integer_as<int8_t>(kCount), -4);
    auto e = error_of([] { integer_as<uint32_t>(kCount); });
    ASSERT_TRUE(e);
    EXPECT_STREQ(e->what(), "DeepComm: DEEPCOMM_TEST_COUNT=-4 does not fit in an unsigned 32-bit integer");
  }
  ScopedEnv big("DEEPCOMM_TEST_BIG", "1099511627776");
  EXPECT_EQ(integer_as<int64_t>(kBig), int64_t{1} << 40);
  EXPECT_TRUE(error_of([] { integer_as<uint32_t>(kBig); }));
  EXPECT_EQ(integer_as<uint8_t>(kSwitch), 1);  // flags read as 0 or 1
  auto e = error_of([] { integer_as<int>(kMode); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), dcInvalidArgument);
  EXPECT_STREQ(e->what(), "DeepComm: setting DEEPCOMM_TEST_MODE is a choice, not a number");
}

TEST(ConfigTable, RegistryFindsListsAndDumps) {
  static constexpr const Setting* kTable[] = {&kMode, &kCount};
  Registry registry;
  registry.add(kTable);
  registry.add(kTable);  // adding a table again changes nothing
  EXPECT_EQ(registry.keys(), (std::vector<std::string>{"DEEPCOMM_TEST_COUNT", "DEEPCOMM_TEST_MODE"}));
  EXPECT_EQ(registry.find("DEEPCOMM_TEST_MODE"), &kMode);
  EXPECT_EQ(registry.find("DEEPCOMM_TEST_MOD"), nullptr);
  ScopedEnv count("DEEPCOMM_TEST_COUNT", "12"), mode("DEEPCOMM_TEST_MODE", nullptr);
  EXPECT_EQ(registry.dump(), "DEEPCOMM_TEST_COUNT=12 (environment)\nDEEPCOMM_TEST_MODE=b (default)\n");

  static constexpr Setting kOtherCount{.name = "DEEPCOMM_TEST_COUNT", .doc = "declared twice"};
  static constexpr const Setting* kClash[] = {&kOtherCount};
  auto e = error_of([&] { registry.add(kClash); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->code(), dcInternalError);
}

// Every room's table is in the process registry once register_settings ran, including rooms whose
// reading code this test does not call.
TEST(ConfigTable, ProcessRegistryHoldsEveryRoomsTable) {
  register_settings();
  const Registry& registry = Registry::instance();
  for (const char* name : {"DEEPCOMM_DEBUG", "NCCL_SOCKET_IFNAME", "DEEPCOMM_SHM_CMA", "DEEPCOMM_TOPO_XML",
                           "DEEPCOMM_CODEC_THREADS", "DEEPCOMM_TRANSPORT", "DEEPCOMM_BOOTSTRAP_TIMEOUT"})
    EXPECT_NE(registry.find(name), nullptr) << name;
  EXPECT_EQ(registry.find("DEEPCOMM_BOOTSTRAP_TIMEOUT"), &settings::kBootstrapTimeout);
}

// Each declared default is a valid value of its setting, unless it is marked as a description.
TEST(ConfigTable, EveryFixedDefaultParses) {
  register_settings();
  for (const Setting* s : Registry::instance().all()) {
    SCOPED_TRACE(s->name);
    EXPECT_STRNE(s->doc, "");
    if (s->computed_default || s->type == Type::Text) continue;
    if (s->type == Type::Integer) EXPECT_TRUE(parse_integer(*s, s->default_text));
    if (s->type == Type::Flag) EXPECT_TRUE(parse_flag(*s, s->default_text));
    if (s->type == Type::Choice) EXPECT_TRUE(parse_choice(*s, s->default_text));
  }
}

// The log level is read through the helper too (base/settings.h), without recursing into the
// log when its own value is bad.
TEST(ConfigTable, LogLevelFromTheTable) {
  struct Case {
    const char* deepcomm;
    const char* nccl;
    LogLevel level;
  };
  for (const Case& c : {Case{nullptr, nullptr, LogLevel::Warn}, Case{nullptr, "info", LogLevel::Info},
                        Case{"TRACE", "NONE", LogLevel::Trace}, Case{"", "version", LogLevel::None},
                        Case{nullptr, "loud", LogLevel::Warn}}) {
    ScopedEnv deepcomm("DEEPCOMM_DEBUG", c.deepcomm), nccl("NCCL_DEBUG", c.nccl);
    testing::internal::CaptureStderr();
    reset_log_level();
    EXPECT_EQ(log_level(), c.level) << (c.deepcomm ? c.deepcomm : "-") << " " << (c.nccl ? c.nccl : "-");
    const std::string told = testing::internal::GetCapturedStderr();
    if (c.nccl && std::string(c.nccl) == "loud")
      EXPECT_NE(told.find("NCCL_DEBUG=loud is not one of NONE, WARN, INFO, TRACE, VERSION (any case); using the "
                          "default (WARN)"),
                std::string::npos)
          << told;
  }
  reset_log_level();
}

// DEEPCOMM_BOOTSTRAP_TIMEOUT is one setting: the communicator's config and the rendezvous root
// read it by the same rule.
TEST(ConfigTable, BootstrapTimeoutHasOneRule) {
  {
    ScopedEnv timeout("DEEPCOMM_BOOTSTRAP_TIMEOUT", "2500");
    EXPECT_EQ(Config::from_environment().bootstrap_timeout_ms, 2500);
  }
  ScopedEnv comm_id("NCCL_COMM_ID", nullptr);  // make_unique_id starts a root of its own
  for (const char* bad : {"0", "-1", "2000000001", "12ms"}) {
    ScopedEnv timeout("DEEPCOMM_BOOTSTRAP_TIMEOUT", bad);
    dcUniqueId id;
    for (auto e : {error_of([] { Config::from_environment(); }), error_of([&] { make_unique_id(&id); })}) {
      ASSERT_TRUE(e) << bad;
      EXPECT_EQ(e->code(), dcInvalidArgument);
      EXPECT_NE(std::string(e->what()).find("is not an integer in [1, 2000000000]"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace dc::config
