// The codec loops built with AVX2, F16C, BMI2 and SSE4.2 (CRC32C), used when the CPU has them all.
#define DC_CODEC_ISA avx2
#define DC_CODEC_ISA_NAME "avx2"
#include "compression/codec_loops.inc"
