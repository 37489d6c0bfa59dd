# DEEPCOMM_SANITIZE builds everything (library, tests, tools) with sanitizers: "address;undefined"
# or "thread" (the `asan` and `tsan` presets of CMakePresets.json; see docs/security.md for the
# runs). UBSan does not recover: undefined behaviour fails the test.
set(DEEPCOMM_SANITIZE "" CACHE STRING "Sanitizers for the whole build: address;undefined, or thread")

# Per sanitizer with a runtime of its own: how much longer tests may take (their timeouts and time
# budgets scale by it; ASan runs the suite 2-5 times slower, TSan 5-15 times), the runtime's name,
# and DEEPCOMM_NO_LEAK_CHECK_ENV (below).
set(DEEPCOMM_TEST_TIME_SCALE 1)
set(DEEPCOMM_NO_LEAK_CHECK_ENV "")
set(sanitizer_runtime "")
if("address" IN_LIST DEEPCOMM_SANITIZE)
  set(DEEPCOMM_TEST_TIME_SCALE 4)
  set(sanitizer_runtime asan)
  set(DEEPCOMM_NO_LEAK_CHECK_ENV "LSAN_OPTIONS=detect_leaks=0")
elseif("thread" IN_LIST DEEPCOMM_SANITIZE)
  set(DEEPCOMM_TEST_TIME_SCALE 10)
  set(sanitizer_runtime tsan)
endif()

if(DEEPCOMM_SANITIZE)
  list(JOIN DEEPCOMM_SANITIZE "," deepcomm_sanitizers)
  add_compile_options(-fsanitize=${deepcomm_sanitizers} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${deepcomm_sanitizers})
  if("thread" IN_LIST DEEPCOMM_SANITIZE)
    # Boost.Asio orders a handler's memory with standalone fences around its invocation, which
    # ThreadSanitizer cannot model (gcc: -Wtsan); its scheduler's mutex already orders a posted
    # handler after its poster, which TSan does see.
    add_compile_definitions(BOOST_ASIO_DISABLE_FENCED_BLOCK)
  endif()
  if("undefined" IN_LIST DEEPCOMM_SANITIZE)
    # Not the enum check: a C caller may pass any int as a dcDataType_t or ncclRedOp_t, which the
    # API validates before use; UBSan would report the first load of it, before the validation.
    # (GCC assumes nothing from an enum's range without -fstrict-enums, so the check is kept.)
    add_compile_options(-fno-sanitize-recover=undefined -fno-sanitize=enum)
  endif()
endif()

# Environments for tests that cannot take every check (empty without a sanitizer runtime; the
# leak-check one without ASan):
# - DEEPCOMM_NO_LEAK_CHECK_ENV turns LeakSanitizer off where its at-exit scan cannot be trusted: in
#   programs not built with the sanitizers (it cannot follow the library's thread-local blocks
#   there) and where a UCX thread's dynamic TLS reads back as a bogus range that crashes the scan.
#   Memory errors are still caught; leaks are checked by the instrumented tests.
# - DEEPCOMM_SANITIZER_PRELOAD_ENV loads the sanitizer's runtime first into a program that is not
#   built with it (Python, the install test's consumers): with libstdc++, so that its exception
#   interceptor finds the real __cxa_throw. DEEPCOMM_SANITIZER_PRELOAD is its list of libraries.
set(DEEPCOMM_SANITIZER_PRELOAD "")
set(DEEPCOMM_SANITIZER_PRELOAD_ENV "")
if(sanitizer_runtime)
  # Clang links its runtime statically into executables only: the shared one (found through an
  # rpath) serves libnccl.so and the uninstrumented programs that load it, as GCC's does.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    set(runtime_file libclang_rt.${sanitizer_runtime}-${CMAKE_SYSTEM_PROCESSOR}.so)
    add_link_options(-shared-libsan)
  else()
    set(runtime_file lib${sanitizer_runtime}.so)
  endif()
  foreach(lib ${runtime_file} libstdc++.so.6)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${lib} OUTPUT_VARIABLE path
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND preload ${path})
  endforeach()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    list(GET preload 0 runtime_path)
    get_filename_component(runtime_dir ${runtime_path} DIRECTORY)
    add_link_options(-Wl,-rpath,${runtime_dir})
  endif()
  list(JOIN preload " " DEEPCOMM_SANITIZER_PRELOAD)
  set(DEEPCOMM_SANITIZER_PRELOAD_ENV "LD_PRELOAD=${DEEPCOMM_SANITIZER_PRELOAD}" ${DEEPCOMM_NO_LEAK_CHECK_ENV})
endif()
