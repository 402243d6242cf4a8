//===- MpiJob.h - the MPI job a Python process belongs to -------*- C++ -*-===//
//
// Under `mpirun -n N python3 script.py` every rank is one device. MPI is
// joined on first use (launch(..., backend="mpi") or compile(...,
// backend="mpi")) and finalized when the interpreter exits (shardc's
// __init__.py registers finalizeMpiJob with atexit).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_PYTHON_MPIJOB_H
#define SHARDC_PYTHON_MPIJOB_H

#include "shardc/Runtime/MpiBackend.h"

namespace shardc::python {

/// Initializes MPI unless it is; raises shardc.ShardcError if it cannot.
MpiEnvironment &joinMpiJob();

/// Finalizes MPI if joinMpiJob initialized it.
void finalizeMpiJob();

/// Raises if the job's rank count is not `numDevices`; `what` names the
/// caller in the message.
void checkMpiJobSize(MpiEnvironment &job, int64_t numDevices,
                     const std::string &what);

} // namespace shardc::python

#endif // SHARDC_PYTHON_MPIJOB_H
