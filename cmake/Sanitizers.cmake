# DEEPCOMM_SANITIZE builds everything (library, tests, tools) with sanitizers: "address;undefined"
# or "thread" (the `asan` and `tsan` presets of CMakePresets.json; see docs/security.md for the
# runs). UBSan does not recover: undefined behaviour fails the test.
set(DEEPCOMM_SANITIZE "" CACHE STRING "Sanitizers for the whole build: address;undefined, or thread")
# How much longer tests may take under the sanitizers (their timeouts and time budgets scale by it;
# ASan runs the suite 2-5 times slower, TSan 5-15 times).
set(DEEPCOMM_TEST_TIME_SCALE 1)
if("address" IN_LIST DEEPCOMM_SANITIZE)
  set(DEEPCOMM_TEST_TIME_SCALE 4)
elseif("thread" IN_LIST DEEPCOMM_SANITIZE)
  set(DEEPCOMM_TEST_TIME_SCALE 10)
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

# Environments for tests that cannot take every check (empty without ASan):
# - DEEPCOMM_NO_LEAK_CHECK_ENV turns LeakSanitizer off where its at-exit scan cannot be trusted: in
#   programs not built with the sanitizers (it cannot follow the library's thread-local blocks
#   there) and where a UCX thread's dynamic TLS reads back as a bogus range that crashes the scan.
#   Memory errors are still caught; leaks are checked by the instrumented tests.
# - DEEPCOMM_SANITIZER_PRELOAD_ENV loads the sanitizer's runtime first into a program that is not
#   built with it (Python): with libstdc++, so that its exception interceptor finds the real
#   __cxa_throw.
set(DEEPCOMM_NO_LEAK_CHECK_ENV "")
set(DEEPCOMM_SANITIZER_PRELOAD_ENV "")
if("address" IN_LIST DEEPCOMM_SANITIZE)
  set(DEEPCOMM_NO_LEAK_CHECK_ENV "LSAN_OPTIONS=detect_leaks=0")
  set(sanitizer_runtime libasan.so)
elseif("thread" IN_LIST DEEPCOMM_SANITIZE)
  set(sanitizer_runtime libtsan.so)
endif()
if(sanitizer_runtime)
  foreach(lib ${sanitizer_runtime} libstdc++.so.6)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${lib} OUTPUT_VARIABLE path
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND preload ${path})
  endforeach()
  list(JOIN preload " " preload)
  set(DEEPCOMM_SANITIZER_PRELOAD_ENV "LD_PRELOAD=${preload}" ${DEEPCOMM_NO_LEAK_CHECK_ENV})
endif()
