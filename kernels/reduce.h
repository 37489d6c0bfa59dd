// CPU reduction kernels for every NCCL datatype and op. Half, bfloat16 and fp8 are widened to
// float32 for each operation and narrowed back (fp8 saturates); integer avg truncates, integer prod
// wraps; min/max propagate NaN. Loops are written to vectorize, except fp8 widening, which reads a
// table.
#pragma once

#include <cstddef>
#include <cstdint>

#include "deepcomm/deepcomm.h"

namespace dc {

size_t datatype_size(dcDataType_t dt);  // 0 for an unknown type
const char* datatype_name(dcDataType_t dt);
const char* redop_name(dcRedOp_t op);  // built-in ops only

// dst[i] = a[i] op b[i] for i < count. dst may alias a or b. op is a built-in op; avg reduces as
// sum (its division happens once, in finalize_avg).
void reduce(dcDataType_t dt, dcRedOp_t op, void* dst, const void* a, const void* b, size_t count);

// buf[i] = buf[i] / nranks (integer types truncate toward zero).
void finalize_avg(dcDataType_t dt, void* buf, size_t count, int nranks);

// dst[i] = src[i] * scalar, scalar given in the datatype itself (pre-multiplied sum).
void premultiply(dcDataType_t dt, void* dst, const void* src, size_t count, const void* scalar);

// Scalar conversions used by kernels and tests.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);
float fp8e4m3_to_float(uint8_t v);
uint8_t float_to_fp8e4m3(float f);  // saturates to +-448
float fp8e5m2_to_float(uint8_t v);
uint8_t float_to_fp8e5m2(float f);  // saturates to +-57344

}  // namespace dc
