// The parameter API (NCCL 2.30): ncclParamBind, the typed getters, ncclParamGet*, and
// ncclParamDumpAll. Arguments are checked; the functions are not implemented yet: they will read
// DeepComm's configuration table (issue 34).
#include "base/log.h"
#include "src/nccl/checks.h"

using dc::nccl::guarded;
using dc::nccl::invalid_argument;
using dc::nccl::not_implemented;
using dc::nccl::require_input;
using dc::nccl::require_output;

namespace {

template <typename T>
ncclResult_t typed_get(ncclParamHandle_t h, T* out, const char* function) {
  return guarded([&]() -> ncclResult_t {
    require_input(h, function, "h");
    require_output(out, function, "out");
    not_implemented(function);
  });
}

}  // namespace

DEEPCOMM_NCCL_API(ncclResult_t, ncclParamBind, ncclParamHandle_t* out, const char* key) {
  return guarded([&]() -> ncclResult_t {
    require_output(out, "ncclParamBind", "out");
    require_input(key, "ncclParamBind", "key");
    not_implemented("ncclParamBind");
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
DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetStr, ncclParamHandle_t h, const char** out) {
  return typed_get(h, out, "ncclParamGetStr");
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGet, ncclParamHandle_t h, void* out, int maxLen,
                  int* len) {
  return guarded([&]() -> ncclResult_t {
    require_input(h, "ncclParamGet", "h");
    if (maxLen < 0) invalid_argument("ncclParamGet", "maxLen " + std::to_string(maxLen) + " is negative");
    if (maxLen > 0) require_output(out, "ncclParamGet", "out");
    require_output(len, "ncclParamGet", "len");
    not_implemented("ncclParamGet");
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetParameter, const char* key, const char** value,
                  int* valueLen) {
  return guarded([&]() -> ncclResult_t {
    require_input(key, "ncclParamGetParameter", "key");
    require_output(value, "ncclParamGetParameter", "value");
    require_output(valueLen, "ncclParamGetParameter", "valueLen");
    not_implemented("ncclParamGetParameter");
  });
}

DEEPCOMM_NCCL_API(ncclResult_t, ncclParamGetAllParameterKeys, const char*** table, int* tableLen) {
  return guarded([&]() -> ncclResult_t {
    require_output(table, "ncclParamGetAllParameterKeys", "table");
    require_output(tableLen, "ncclParamGetAllParameterKeys", "tableLen");
    not_implemented("ncclParamGetAllParameterKeys");
  });
}

// Returns nothing, so the refusal goes to ncclGetLastError and the log.
DEEPCOMM_NCCL_API(void, ncclParamDumpAll) {
  guarded([]() -> ncclResult_t { not_implemented("ncclParamDumpAll"); });
  DC_WARN("%s", dcGetLastError());
}
