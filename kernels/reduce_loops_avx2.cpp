// The reduction loops built with AVX2 and F16C (see CMakeLists.txt), used when the CPU has both.
#define DC_KERNEL_ISA avx2
#include "kernels/reduce_loops.inc"
