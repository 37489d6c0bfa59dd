// Out-of-line scalar conversions between float32 and the narrow float formats.
#include "kernels/minifloat.h"
#include "kernels/reduce.h"

namespace dc {

float half_to_float(uint16_t h) { return kernels::half_to_float_inline(h); }
uint16_t float_to_half(float f) { return kernels::float_to_half_inline(f); }
float bf16_to_float(uint16_t b) { return kernels::bf16_to_float_inline(b); }
uint16_t float_to_bf16(float f) { return kernels::float_to_bf16_inline(f); }
float fp8e4m3_to_float(uint8_t v) { return kernels::fp8e4m3_to_float_inline(v); }
uint8_t float_to_fp8e4m3(float f) { return uint8_t(kernels::float_to_fp8e4m3_inline(f)); }
float fp8e5m2_to_float(uint8_t v) { return kernels::fp8e5m2_to_float_inline(v); }
uint8_t float_to_fp8e5m2(float f) { return uint8_t(kernels::float_to_fp8e5m2_inline(f)); }

}  // namespace dc
