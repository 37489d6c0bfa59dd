# DEEPCOMM_SANITIZE builds everything (library, tests, tools) with sanitizers: "address;undefined"
# or "thread" (the `asan` and `tsan` presets of CMakePresets.json; see docs/security.md for the
# runs). UBSan does not recover: undefined behaviour fails the test.
set(DEEPCOMM_SANITIZE "" CACHE STRING "Sanitizers for the whole build: address;undefined, or thread")
if(DEEPCOMM_SANITIZE)
  list(JOIN DEEPCOMM_SANITIZE "," deepcomm_sanitizers)
  add_compile_options(-fsanitize=${deepcomm_sanitizers} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${deepcomm_sanitizers})
  if("undefined" IN_LIST DEEPCOMM_SANITIZE)
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
endif()
