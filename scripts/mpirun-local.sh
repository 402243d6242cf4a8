#!/bin/sh
# mpirun with the flags that run shardc's MPI jobs on one machine, in a
# container, possibly as root, with more ranks than cores. The one place
# these flags live: the ctests (SHARDC_MPIRUN in CMake) and the lit tests
# (%mpirun) call this script; docs/mpi.md explains each flag.
#
#   scripts/mpirun-local.sh -n 4 build/bin/shardc ...

# In a sanitizer build (docs/development.md), LeakSanitizer would report
# at exit what Open MPI allocated and never frees (much of it from
# components it has unloaded, so it cannot be suppressed by name): the ranks
# of an MPI job run without leak checking, with every other check on.
if [ -n "${ASAN_OPTIONS:-}" ]; then
  ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
  export ASAN_OPTIONS
fi

exec mpirun \
  --oversubscribe \
  --allow-run-as-root \
  --bind-to none \
  --mca btl self,vader \
  --mca btl_vader_single_copy_mechanism none \
  --mca oob_tcp_if_include lo \
  --mca mpi_yield_when_idle 1 \
  "$@"
