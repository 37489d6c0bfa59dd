/* DeepComm's nccl.h with the CUDA toolkit in the include path: cudaStream_t is CUDA's own. */
#include "deepcomm/nccl.h"

#ifndef DEEPCOMM_NCCL_HAVE_CUDA_RUNTIME
#error "this translation unit is built with the CUDA include directory"
#endif

size_t our_c_with_cuda_config_size(void) {
  const ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  const cudaStream_t stream = (struct CUstream_st*)0; /* CUDA's typedef, same type as ours */
  return stream == 0 ? config.size : 0;
}
