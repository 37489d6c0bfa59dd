// Proves that the CUDA room sees the toolkit's headers, and that the toolkit is new enough for the
// plugin: it resolves driver entry points with cudaGetDriverEntryPointByVersion (DESIGN.md, GPU
// path, rule 6), which CUDA 12.5 introduced.
#include <cuda_runtime.h>

static_assert(CUDART_VERSION >= 12050, "the CUDA plugin needs CUDA 12.5 or newer (cudaGetDriverEntryPointByVersion)");
