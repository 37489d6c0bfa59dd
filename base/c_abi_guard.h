// The exception guard of the C ABI, shared by both APIs (deepcomm.h in src/core/api.cpp, the NCCL
// entry points in src/nccl/api.h): no exception crosses the boundary. A dc::Error becomes its own
// code, running out of memory dcSystemError, anything else dcInternalError; the message is kept for
// dcGetLastError / ncclGetLastError.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "base/error.h"
#include "deepcomm/deepcomm.h"

namespace dc {

// Records `message` followed by `detail` as the last error; never throws (it runs inside catch
// handlers).
inline void record_last_error(const char* message, const char* detail = "") noexcept {
  try {
    set_last_error(std::string(message) + detail);
  } catch (...) {
    // Out of memory while storing the message: the result code still reports the failure.
  }
}

// Runs the body of an API function whose result type is `Result`: an enum with dcResult_t's values
// (ncclResult_t has them, see deepcomm.h), so an error's code maps onto it by value. A body that
// returns nothing succeeded when it returns; one that returns a `Result` gives the call's result.
template <typename Result, typename Body>
Result guard_c_abi(Body&& body) noexcept {
  static_assert(std::is_enum_v<Result>, "the C ABI returns a result enum with dcResult_t's values");
  const auto result_of = [](dcResult_t code) { return static_cast<Result>(code); };
  try {
    if constexpr (std::is_void_v<std::invoke_result_t<Body&>>) {
      body();
      return result_of(dcSuccess);
    } else {
      return body();
    }
  } catch (const Error& e) {
    record_last_error(e.what());
    return result_of(e.code());
  } catch (const std::bad_alloc&) {
    record_last_error("DeepComm: out of memory");
    return result_of(dcSystemError);
  } catch (const std::exception& e) {
    record_last_error("DeepComm: internal error: ", e.what());
    return result_of(dcInternalError);
  } catch (...) {
    record_last_error("DeepComm: internal error");
    return result_of(dcInternalError);
  }
}

}  // namespace dc
