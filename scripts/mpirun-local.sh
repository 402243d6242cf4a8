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

# How vader moves a large message between ranks: `none` (the default)
# copies it into shared memory and out again, which every container
# allows; `cma` (Cross Memory Attach: the receiver reads the sender's
# memory with process_vm_readv) copies it once, where ptrace between the
# ranks is allowed. bench/mpi_bench.py sets it to measure the transport a
# machine without those limits gives.
single_copy="${SHARDC_MPI_SINGLE_COPY:-none}"

exec mpirun \
  --oversubscribe \
  --allow-run-as-root \
  --bind-to none \
  --mca btl self,vader \
  --mca btl_vader_single_copy_mechanism "$single_copy" \
  --mca oob_tcp_if_include lo \
  --mca mpi_yield_when_idle 1 \
  "$@"
