// The codec loops for the compiler's baseline instruction set (e.g. SSE2 on x86-64).
#define DC_CODEC_ISA baseline
#define DC_CODEC_ISA_NAME "baseline"
#include "compression/codec_loops.inc"
