# Fails when a kernel of the CUDA plugin spills registers: `cuobjdump -res-usage` lists every
# kernel of every architecture in the library with its stack frame (STACK) and local memory
# (LOCAL); spills live there, so a kernel with both at 0 spilled nothing (ptxas' "0 bytes spill
# stores, 0 bytes spill loads" in the build log says the same per kernel).
# cmake -DCUOBJDUMP=<cuobjdump> -DLIBRARY=<libdeepcomm-cuda.so> -P check_no_spills.cmake
execute_process(COMMAND ${CUOBJDUMP} -res-usage ${LIBRARY}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${CUOBJDUMP} -res-usage ${LIBRARY} failed (${status}): ${err}")
endif()
string(REGEX MATCHALL "Function [^:\n]+:\n[^\n]*" kernels "${out}")
list(LENGTH kernels count)
if(count EQUAL 0)
  message(FATAL_ERROR "cuobjdump listed no kernel in ${LIBRARY}:\n${out}")
endif()
set(spilling "")
foreach(kernel ${kernels})
  string(REGEX MATCH "STACK:([0-9]+)" stack "${kernel}")
  set(stack ${CMAKE_MATCH_1})
  string(REGEX MATCH "LOCAL:([0-9]+)" local "${kernel}")
  set(local ${CMAKE_MATCH_1})
  if(NOT stack STREQUAL "0" OR NOT local STREQUAL "0")
    string(APPEND spilling "  ${kernel}\n")
  endif()
endforeach()
if(spilling)
  message(FATAL_ERROR "kernels of ${LIBRARY} with a stack frame or local memory (spills):\n${spilling}")
endif()
message(STATUS "${count} kernels (all architectures) in ${LIBRARY}, none with a stack frame or local memory")
