# DEEPCOMM_SANITIZE builds everything (library, tests, tools) with sanitizers: "address;undefined"
# or "thread" (the `asan` and `tsan` presets of CMakePresets.json; see docs/security.md for the
# runs). UBSan does not recover: undefined behaviour fails the test.
set(DEEPCOMM_SANITIZE "" CACHE STRING "Sanitizers for the whole build: address;undefined, or thread")
if(DEEPCOMM_SANITIZE)
  list(JOIN DEEPCOMM_SANITIZE "," deepcomm_sanitizers)
  add_compile_options(-fsanitize=${deepcomm_sanitizers} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${deepcomm_sanitizers})
  if("undefined" IN_LIST DEEPCOMM_SANITIZE)
    # Not the enum check: a C caller may pass any int as a dcDataType_t or ncclRedOp_t, which the
    # API validates before use; UBSan would report the first load of it, before the validation.
    # (GCC assumes nothing from an enum's range without -fstrict-enums, so the check is kept.)
    add_compile_options(-fno-sanitize-recover=undefined -fno-sanitize=enum)
  endif()
endif()
