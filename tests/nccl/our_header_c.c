/* DeepComm's nccl.h compiles as C11 without the CUDA toolkit; its _Static_asserts run here. */
#include "deepcomm/nccl.h"

#ifdef DEEPCOMM_NCCL_HAVE_CUDA_RUNTIME
#error "this translation unit is built without the CUDA include directory"
#endif

size_t our_c_config_size(void) {
  const ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  return config.size;
}
