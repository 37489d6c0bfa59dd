// Internal error type. Inside the library failures are thrown as dc::Error and caught at the C ABI
// boundary (guard_c_abi in base/c_abi_guard.h), which turns them into the API's result code plus a
// per-thread message.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "deepcomm/deepcomm.h"

namespace dc {

class Error : public std::runtime_error {
 public:
  Error(dcResult_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  dcResult_t code() const { return code_; }

 private:
  dcResult_t code_;
};

// Result of an asynchronous step: success, or a code with its message.
struct Status {
  dcResult_t code = dcSuccess;
  std::string message;
  uint64_t detail = 0;  // code-specific (a signature mismatch: the peer's operation signature)

  bool ok() const { return code == dcSuccess; }
  static Status success() { return {}; }
  static Status failure(dcResult_t c, std::string m) { return {c, std::move(m)}; }
};

[[noreturn]] inline void fail(dcResult_t code, const std::string& message) { throw Error(code, message); }

// Per-thread message for dcGetLastError / ncclGetLastError.
void set_last_error(const std::string& message);
const char* last_error();

}  // namespace dc
