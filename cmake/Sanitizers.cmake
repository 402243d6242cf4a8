# SHARDC_SANITIZE=address,undefined builds every shardc target (libraries,
# tools, tests, fuzzers) with those sanitizers, and gives every ctest and lit
# run the runtime options that make a finding fail its test.
# docs/development.md says how to use it.

set(SHARDC_SANITIZE "" CACHE STRING
  "Sanitizers for every shardc target, a list such as address,undefined (empty: none)")

# libFuzzer needs clang; a sanitizer build with clang gets the fuzzers unless
# SHARDC_FUZZ says otherwise.
if(SHARDC_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  set(shardc_fuzz_default ON)
else()
  set(shardc_fuzz_default OFF)
endif()
option(SHARDC_FUZZ "Build the libFuzzer harnesses under fuzz/ (needs clang)"
  ${shardc_fuzz_default})
if(SHARDC_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "SHARDC_FUZZ needs clang (libFuzzer); configure with "
    "CC=clang-22 CXX=clang++-22")
endif()

# Accept both "address,undefined" and the CMake list "address;undefined".
string(REPLACE ";" "," SHARDC_SANITIZE "${SHARDC_SANITIZE}")

set(SHARDC_SANITIZER_ENV "")
if(SHARDC_SANITIZE)
  # -fno-sanitize-recover: a UBSan finding stops the program (and so fails a
  # test or counts as a fuzzer crash) instead of printing and going on.
  set(flags -fsanitize=${SHARDC_SANITIZE} -fno-sanitize-recover=all
    -fno-omit-frame-pointer)
  add_compile_options(${flags})
  add_link_options(${flags})
  # File and line in every report's stack, at little build cost.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    add_compile_options(-gline-tables-only)
  endif()

  # Debian's LLVM and MLIR libraries are not built with ASan, but the
  # allocators in their headers poison memory here that the uninstrumented
  # code never unpoisons: every MLIRContext would report "use-after-poison".
  # allocator_may_return_null: a test checks that a huge tensor allocation is
  # a diagnostic, which needs calloc to return NULL as it does unsanitized.
  # abort_on_error: a finding ends in SIGABRT, not exit code 1, so that
  # `not shardc ...` in a lit test and exit-code checks cannot mistake it
  # for an expected user error.
  set(symbolizer /usr/lib/llvm-22/bin/llvm-symbolizer)
  set(SHARDC_ASAN_OPTIONS
    "allow_user_poisoning=0:allocator_may_return_null=1:halt_on_error=1:abort_on_error=1:detect_leaks=1:external_symbolizer_path=${symbolizer}")
  set(SHARDC_UBSAN_OPTIONS
    "print_stacktrace=1:halt_on_error=1:abort_on_error=1:external_symbolizer_path=${symbolizer}")
  set(SHARDC_SANITIZER_ENV
    "ASAN_OPTIONS=${SHARDC_ASAN_OPTIONS}" "UBSAN_OPTIONS=${SHARDC_UBSAN_OPTIONS}")
endif()

if(SHARDC_FUZZ)
  # Coverage instrumentation for every library the fuzzers link; only the
  # harnesses themselves link libFuzzer's main (fuzz/CMakeLists.txt).
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# Gives every test added so far in the calling directory the sanitizer
# environment; each CMakeLists.txt that calls add_test ends with it. (CMake
# 3.25 sets test properties only from the test's own directory.) The
# gtest-discovered tests get it in add_shardc_unittest.
function(shardc_add_sanitizer_env)
  set_property(GLOBAL APPEND PROPERTY SHARDC_SANITIZER_ENV_DIRS
    ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT SHARDC_SANITIZER_ENV)
    return()
  endif()
  get_property(tests DIRECTORY PROPERTY TESTS)
  if(tests)
    set_property(TEST ${tests} APPEND PROPERTY ENVIRONMENT ${SHARDC_SANITIZER_ENV})
  endif()
endfunction()

# A directory whose tests were never given the environment would run them
# under ASan with the wrong options (and fail for the wrong reason): stop
# configuring instead.
function(shardc_check_sanitizer_env dir)
  get_property(tests DIRECTORY ${dir} PROPERTY TESTS)
  get_property(done GLOBAL PROPERTY SHARDC_SANITIZER_ENV_DIRS)
  if(tests AND NOT dir IN_LIST done)
    message(FATAL_ERROR "${dir}/CMakeLists.txt adds tests but does not end "
      "with shardc_add_sanitizer_env() (cmake/Sanitizers.cmake)")
  endif()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    shardc_check_sanitizer_env(${sub})
  endforeach()
endfunction()
