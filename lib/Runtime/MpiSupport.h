//===- MpiSupport.h - mpi.h and shared MPI helpers --------------*- C++ -*-===//
//
// Private to lib/Runtime. Includes Open MPI's C API only: the C++ bindings
// are deprecated and would need exceptions, which Debian's LLVM builds
// without.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_RUNTIME_MPISUPPORT_H
#define SHARDC_LIB_RUNTIME_MPISUPPORT_H

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <string>

namespace shardc::detail {

/// MPI's own text for an error code ("MPI_ERR_RANK: invalid rank").
inline std::string mpiErrorString(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, length);
}

/// This process's rank in MPI_COMM_WORLD, or -1 before MPI_Init.
inline int worldRank() {
  int initialized = 0, finalized = 0, rank = -1;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

} // namespace shardc::detail

#endif // SHARDC_LIB_RUNTIME_MPISUPPORT_H
