// The reduction loops for the compiler's baseline instruction set (e.g. SSE2 on x86-64).
#define DC_KERNEL_ISA baseline
#include "kernels/reduce_loops.inc"
