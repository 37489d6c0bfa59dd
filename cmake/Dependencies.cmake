# Required: threads and Boost (Asio is header-only). Everything else is optional and detected.
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED)
find_package(PkgConfig)

if(PkgConfig_FOUND)
  pkg_check_modules(PMIX IMPORTED_TARGET pmix)
  pkg_check_modules(HWLOC IMPORTED_TARGET hwloc)
  # UCX: headers at build time; libucp.so.0 is loaded when a communicator first chooses UCX.
  pkg_check_modules(UCX ucx)
endif()
find_package(MPI COMPONENTS C QUIET)
find_package(GTest QUIET)
find_package(benchmark QUIET)

# The NCCL header of the CUDA toolkit, used only by the ABI compatibility test.
find_file(DEEPCOMM_VENDOR_NCCL_H nccl.h PATHS /usr/local/cuda/include NO_DEFAULT_PATH)

message(STATUS "DeepComm: PMIx ${PMIX_FOUND}, hwloc ${HWLOC_FOUND}, UCX ${UCX_FOUND}, MPI ${MPI_C_FOUND}, "
               "GTest ${GTest_FOUND}, benchmark ${benchmark_FOUND}, vendor nccl.h ${DEEPCOMM_VENDOR_NCCL_H}")
