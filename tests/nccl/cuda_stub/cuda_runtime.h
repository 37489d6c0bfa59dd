/* The little of the CUDA runtime's header that NVIDIA's nccl.h and the host parts of its
 * nccl_device headers use, so that vendor230_layout.cpp compiles without the CUDA toolkit.
 * cudaStream_t is the runtime's own typedef. */
#pragma once
#include <stddef.h>
#define CUDART_VERSION 13000
typedef struct CUstream_st* cudaStream_t;
#define __host__
#define __device__
