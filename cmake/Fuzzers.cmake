# libFuzzer targets need clang: a separate build configured with CC=clang-14 CXX=clang++-14
# -DDEEPCOMM_FUZZERS=ON. There the rooms that have fuzz targets are instrumented for coverage and
# built with AddressSanitizer and UBSan (no recovery), which everything linking them inherits.
option(DEEPCOMM_FUZZERS "Build the libFuzzer targets (clang with libFuzzer)" OFF)
if(DEEPCOMM_FUZZERS)
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer)
  check_cxx_source_compiles("
    #include <cstddef>
    #include <cstdint>
    extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }" DEEPCOMM_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  if(NOT DEEPCOMM_HAVE_LIBFUZZER)
    message(FATAL_ERROR "DEEPCOMM_FUZZERS needs a compiler with libFuzzer (clang++-14 and libclang-rt-14-dev)")
  endif()
endif()

# Instruments a room for its fuzz targets (in a DEEPCOMM_FUZZERS build only).
function(deepcomm_instrument_for_fuzzing target)
  if(DEEPCOMM_FUZZERS)
    target_compile_options(${target} PUBLIC
      -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(${target} INTERFACE -fsanitize=address,undefined)
  endif()
endfunction()
