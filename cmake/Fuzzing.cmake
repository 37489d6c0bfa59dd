# libFuzzer targets (tests/fuzz/CMakeLists.txt) need clang: configure a separate build with
# -DCMAKE_CXX_COMPILER=clang++-14 -DDEEPCOMM_FUZZERS=ON. Every room is then instrumented for
# coverage and built with AddressSanitizer and UBSan, which everything linking it inherits.
option(DEEPCOMM_FUZZERS "Build libFuzzer targets (clang with libFuzzer)" OFF)
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

# Called by deepcomm_room for every room.
function(deepcomm_instrument_for_fuzzing target)
  if(DEEPCOMM_FUZZERS)
    target_compile_options(${target} PUBLIC
      -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
    target_link_options(${target} INTERFACE -fsanitize=address,undefined)
  endif()
endfunction()
