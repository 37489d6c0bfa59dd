// The parameter API (NCCL 2.30) over DeepComm's configuration table (base/config_table.h): every
// DEEPCOMM_* setting and every NCCL_* setting DeepComm honours, by key. A handle is the setting's
// declaration itself (tables are static), checked against the registry before it is read. Every
// setting is documented (docs/configuration.md), so the key list and the dump always hold all of
// them, with or without NCCL_PARAM_DUMP_ALL.
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "base/config_table.h"
#include "base/log.h"
#include "src/core/config.h"
#include "src/nccl/checks.h"
#include "src/nccl/settings.h"

using dc::nccl::guarded;
using dc::nccl::invalid_argument;
using dc::nccl::require_input;
using dc::nccl::require_output;
namespace config = dc::config;

namespace {

// The registry with the NCCL library's table added to the rooms' tables, once per process.
config::Registry& registry() {
  static std::once_flag once;
  std::call_once(once, [] {
    dc::register_settings();
    config::Registry::instance().add(config::Table(dc::settings::kNcclTable));
  });
  return config::Registry::instance();
}

const config::Setting& setting_of_key(const char* key, const char* function) {
  const config::Setting* setting = registry().find(key);
  if (setting == nullptr)
    invalid_argument(function, std::string("unknown parameter key \"") + key +
                                   "\" (docs/configuration.md lists DeepComm's settings)");
  return *setting;
}

const config::Setting& setting_of(ncclParamHandle_t h, const char* function) {
  require_input(h, function, "h");
  const auto* setting = reinterpret_cast<const config::Setting*>(h);
  for (const config::Setting* known : registry().all())
    if (known == setting) return *setting;
  invalid_argument(function, "h is not a handle from ncclParamBind");
}

template <typename T>
ncclResult_t typed_get(ncclParamHandle_t h, T* out, const char* function) {
  return guarded([&]() -> ncclResult_t {
    const config::Setting& setting = setting_of(h, function);
    require_output(out, function, "out");
    *out = config::integer_as<T>(setting);  // fails for words and text, or a value that does not fit T
    return ncclSuccess;
  });
}

}  // namespace

DEEPCOMM_NCCL_API(ncclResult_t, ncclParamBind, ncclParamHandle_t* out, const char* key) {
  return guarded([&]() -> ncclResult_t {
    require_output(out, "ncclParamBind", "out");
    require_input(key, "ncclParamBind", "key");
    const config::Setting& setting = setting_of_key(key, "ncclParamBind");
    *out = reinterpret_cast<ncclParamHandle_t>(const_cast<config::Setting*>(&setting));
    return ncclSuccess;
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetI8, ncclParamHandle_t h, int8_t* out) {
  return typed_get(h, out, "ncclParamGetI8");
}
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetI16, ncclParamHandle_t h, int16_t* out) {
  return typed_get(h, out, "ncclParamGetI16");
}
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetI32, ncclParamHandle_t h, int32_t* out) {
  return typed_get(h, out, "ncclParamGetI32");
}
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetI64, ncclParamHandle_t h, int64_t* out) {
  return typed_get(h, out, "ncclParamGetI64");
}
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetU8, ncclParamHandle_t h, uint8_t* out) {
  return typed_get(h, out, "ncclParamGetU8");
}
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetU16, ncclParamHandle_t h, uint16_t* out) {
  return typed_get(h, out, "ncclParamGetU16");
}
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetU32, ncclParamHandle_t h, uint32_t* out) {
  return typed_get(h, out, "ncclParamGetU32");
}
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetU64, ncclParamHandle_t h, uint64_t* out) {
  return typed_get(h, out, "ncclParamGetU64");
}

// The string stays valid until this thread's next ncclParamGetStr, as NCCL documents.
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetStr, ncclParamHandle_t h, const char** out) {
  return guarded([&]() -> ncclResult_t {
    const config::Setting& setting = setting_of(h, "ncclParamGetStr");
    require_output(out, "ncclParamGetStr", "out");
    thread_local std::string value;
    value = config::value_text(setting);
    *out = value.c_str();
    return ncclSuccess;
  });
}

// The value's bytes: an integer or flag setting as an int64_t, a word or text setting as its
// characters (no terminating NUL). *len is the value's size; a buffer smaller than that is refused
// and nothing is written.
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGet, ncclParamHandle_t h, void* out, int maxLen, int* len) {
  return guarded([&]() -> ncclResult_t {
    const config::Setting& setting = setting_of(h, "ncclParamGet");
    if (maxLen < 0) invalid_argument("ncclParamGet", "maxLen " + std::to_string(maxLen) + " is negative");
    require_output(len, "ncclParamGet", "len");
    std::string bytes;
    if (setting.type == config::Type::Integer || setting.type == config::Type::Flag) {
      const int64_t value = config::integer_as<int64_t>(setting);
      bytes.assign(reinterpret_cast<const char*>(&value), sizeof value);
    } else {
      bytes = config::value_text(setting);
    }
    *len = static_cast<int>(bytes.size());
    if (static_cast<size_t>(maxLen) < bytes.size())
      invalid_argument("ncclParamGet", std::string(setting.name) + "'s value takes " + std::to_string(bytes.size()) +
                                           " bytes, maxLen is " + std::to_string(maxLen));
    if (!bytes.empty()) {
      require_output(out, "ncclParamGet", "out");
      std::memcpy(out, bytes.data(), bytes.size());
    }
    return ncclSuccess;
  });
}

// The value stays valid until this thread's next ncclParamGetParameter.
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetParameter, const char* key, const char** value, int* valueLen) {
  return guarded([&]() -> ncclResult_t {
    require_input(key, "ncclParamGetParameter", "key");
    require_output(value, "ncclParamGetParameter", "value");
    require_output(valueLen, "ncclParamGetParameter", "valueLen");
    const config::Setting& setting = setting_of_key(key, "ncclParamGetParameter");
    thread_local std::string text;
    text = config::value_text(setting);
    *value = text.c_str();
    *valueLen = static_cast<int>(text.size());
    return ncclSuccess;
  });
}

// The table stays valid until this thread's next ncclParamGetAllParameterKeys.
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetAllParameterKeys, const char*** table, int* tableLen) {
  return guarded([&]() -> ncclResult_t {
    require_output(table, "ncclParamGetAllParameterKeys", "table");
    require_output(tableLen, "ncclParamGetAllParameterKeys", "tableLen");
    thread_local std::vector<const char*> keys;
    keys.clear();
    for (const config::Setting* setting : registry().all()) keys.push_back(setting->name);
    *table = keys.data();
    *tableLen = static_cast<int>(keys.size());
    return ncclSuccess;
  });
}

// Asked for explicitly, so written whatever the log level: one "NAME=value (source)" line each.
DEEPCOMM_NCCL_API(void, ncclParamDumpAll) {
  guarded([]() -> ncclResult_t {
    const std::string dump = registry().dump();
    fprintf(stderr, "%s", dump.c_str());
    return ncclSuccess;
  });
}
