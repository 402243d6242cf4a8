# The instruction set the build targets (SHARDC_CPU_TARGET).
#
# The interpreter's elementwise and reduction kernels are Eigen expressions,
# vectorized at compile time for the ISA the compiler targets; the GEMMs run
# on OpenBLAS, which picks its kernels at run time. Built for baseline
# x86-64 (SSE2), exp/tanh/sqrt/div run four floats at a time where PyTorch's
# runtime-dispatched kernels run eight (bench/transformer_bench.py). Like
# most numerical codes built from source, shardc therefore targets the build
# machine's class of CPU by default:
#
#   auto (default)  x86-64-v3 (AVX2, FMA, Haswell and later) when the
#                   compiler accepts it and the build machine runs it, else
#                   the compiler's default
#   default         the compiler's default (portable x86-64 binaries)
#   <name>          -march=<name>, e.g. native or x86-64-v4
#
# One target for the whole build: compiling only some files for AVX2 would
# let the linker pick AVX2 copies of inline functions (Eigen's) for the
# portable paths. With it goes -ffp-contract=off: Eigen's vector kernels use
# FMA where they say so, but the compiler does not fuse the scalar code's
# a * b + c on its own, so that code rounds as written whatever the target.
set(SHARDC_CPU_TARGET "auto" CACHE STRING
  "CPU the build targets: auto (x86-64-v3 where the build machine runs it), default, or an -march value")

include(CheckCXXCompilerFlag)
include(CheckCXXSourceRuns)

set(SHARDC_MARCH "")
if(SHARDC_CPU_TARGET STREQUAL "auto")
  check_cxx_compiler_flag("-march=x86-64-v3" SHARDC_HAVE_MARCH_X86_64_V3)
  if(SHARDC_HAVE_MARCH_X86_64_V3)
    set(CMAKE_REQUIRED_FLAGS "-march=x86-64-v3")
    check_cxx_source_runs("
      int main() {
        __builtin_cpu_init();
        return __builtin_cpu_supports(\"avx2\") && __builtin_cpu_supports(\"fma\") ? 0 : 1;
      }" SHARDC_BUILD_MACHINE_RUNS_X86_64_V3)
    unset(CMAKE_REQUIRED_FLAGS)
    if(SHARDC_BUILD_MACHINE_RUNS_X86_64_V3)
      set(SHARDC_MARCH "x86-64-v3")
    endif()
  endif()
elseif(NOT SHARDC_CPU_TARGET STREQUAL "default")
  set(SHARDC_MARCH "${SHARDC_CPU_TARGET}")
endif()

if(SHARDC_MARCH)
  add_compile_options("-march=${SHARDC_MARCH}" "-ffp-contract=off")
  message(STATUS "shardc targets -march=${SHARDC_MARCH} (SHARDC_CPU_TARGET=${SHARDC_CPU_TARGET})")
else()
  message(STATUS "shardc targets the compiler's default CPU (SHARDC_CPU_TARGET=${SHARDC_CPU_TARGET})")
endif()
