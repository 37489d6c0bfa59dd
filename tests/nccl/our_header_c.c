/* DeepComm's nccl.h compiles as C11 without the CUDA toolkit; its _Static_asserts run here. Where
 * the compiler finds <cuda_runtime.h> on its default path (the toolkit installed in /usr/local),
 * the header is told not to use it, which is the same code path as a machine without CUDA. */
#define DEEPCOMM_NCCL_WITHOUT_CUDA_RUNTIME 1
#include "deepcomm/nccl.h"

#ifdef DEEPCOMM_NCCL_HAVE_CUDA_RUNTIME
#error "this translation unit is built without the CUDA include directory"
#endif

size_t our_c_config_size(void) {
  const ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  return config.size;
}
