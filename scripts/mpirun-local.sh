#!/bin/sh
# mpirun with the flags that run shardc's MPI jobs on one machine, in a
# container, possibly as root, with more ranks than cores. The one place
# these flags live: the ctests (SHARDC_MPIRUN in CMake) and the lit tests
# (%mpirun) call this script; docs/mpi.md explains each flag.
#
#   scripts/mpirun-local.sh -n 4 build/bin/shardc ...
exec mpirun \
  --oversubscribe \
  --allow-run-as-root \
  --bind-to none \
  --mca btl self,vader \
  --mca btl_vader_single_copy_mechanism none \
  --mca oob_tcp_if_include lo \
  --mca mpi_yield_when_idle 1 \
  "$@"
