// DC_HOST_DEVICE marks code written once for the CPU and the GPU (kernels/element_ops.h): it is
// __host__ __device__ when nvcc compiles the file and expands to nothing for the host compiler,
// so the CPU build reads plain C++ and needs no CUDA header.
#pragma once

#if defined(__CUDACC__)
#define DC_HOST_DEVICE __host__ __device__
#else
#define DC_HOST_DEVICE
#endif
