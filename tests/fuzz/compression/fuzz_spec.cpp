// libFuzzer target: the spec parser. Oracle: a spec that parses prints as canonical text that
// parses back to the same spec, and its worst-case size is defined for any count (or refused).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/error.h"
#include "compression/form/message_form.h"
#include "compression/form/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  dc::compression::Spec spec;
  try {
    spec = dc::compression::parse_spec(text);
  } catch (const dc::Error&) {
    return 0;
  }
  if (!(dc::compression::parse_spec(spec.to_string()) == spec)) std::abort();
  for (uint64_t count : {uint64_t(0), uint64_t(1), uint64_t(size) * 1000, uint64_t(1) << 32}) {
    try {
      (void)dc::compression::max_message_bytes(spec, count);
    } catch (const dc::Error&) {}
  }
  return 0;
}
