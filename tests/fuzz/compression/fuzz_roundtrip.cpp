// libFuzzer target: encoder against decoder. The input chooses a spec, a datatype and the values
// (raw bytes, so NaN, infinities, denormals and ties all occur). Oracle: every message the
// encoder makes decodes, fits the worst case, gives non-finite results exactly where the input
// was not finite, and leaves a finite residual.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "compression/compression.h"
#include "kernels/minifloat.h"

namespace {

namespace c = dc::compression;

const char* const kSpecs[] = {"q8,chunk:4096",
                              "q8:stochastic:16,huffman,ef,chunk:4096",
                              "topk:0.01,ef,chunk:4096",
                              "topk:0.05,q8,huffman,ef:0.5,chunk:4096",
                              "topk:0.3:sampled,q8,huffman,ef,chunk:4096",
                              "topk:0.1:sampled,huffman,chunk:4096",
                              "auto:0.02,ef,chunk:4096",
                              "topk:1,q8:stochastic"};

void check(bool ok) {
  if (!ok) std::abort();
}

float element(dcDataType_t type, const uint8_t* p) {
  uint32_t f;
  uint16_t h;
  switch (type) {
    case dcFloat16: std::memcpy(&h, p, 2); return dc::kernels::half_to_float_inline(h);
    case dcBfloat16: std::memcpy(&h, p, 2); return dc::kernels::bf16_to_float_inline(h);
    default: std::memcpy(&f, p, 4); return __builtin_bit_cast(float, f);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 6) return 0;  // at least one element
  const c::Spec spec = c::parse_spec(kSpecs[data[0] % (sizeof kSpecs / sizeof *kSpecs)]);
  const dcDataType_t types[3] = {dcFloat32, dcFloat16, dcBfloat16};
  const dcDataType_t type = types[(data[0] >> 4) % 3];
  const size_t width = type == dcFloat32 ? 4 : 2;
  // One input in eight repeats its values to reach several chunks (about 14000 elements).
  const size_t base = (size - 2) / width;
  const size_t reps = (data[1] & 7) == 7 ? 1 + 14000 / base : 1;
  const size_t count = base * reps;
  std::vector<uint8_t> input(count * width);
  for (size_t r = 0; r < reps; ++r) std::memcpy(input.data() + r * base * width, data + 2, base * width);

  c::Residual residual(count);
  std::vector<uint8_t> msg(c::max_message_bytes(spec, count));
  c::Encoder encoder;
  const c::EncodeResult res =
      encoder.encode(spec, type, input.data(), count, spec.error_feedback ? &residual : nullptr, data[1], msg);
  check(res.bytes <= msg.size());
  msg.resize(res.bytes);
  std::vector<float> out(count, 0.0f);
  c::decode_accumulate(msg, {dcFloat32, out.data(), count});
  for (size_t i = 0; i < count; ++i) {
    const float x = element(type, input.data() + i * width);
    check(std::isfinite(out[i]) == std::isfinite(x));
    if (std::isnan(x)) check(std::isnan(out[i]));
    if (std::isinf(x)) check(out[i] == x);
    check(std::isfinite(residual.data()[i]));
  }
  return 0;
}
