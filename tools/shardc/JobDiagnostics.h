//===- JobDiagnostics.h - one error message per mpirun job ------*- C++ -*-===//
//
// Under `mpirun -n N shardc ...` every rank runs the same command, and until
// the ranks start working together they find the same errors (a model that
// does not load, a bad option): printed by every rank, each would appear N
// times. So from the start of main each rank's stderr goes to a temporary
// file, until the ranks meet: when the mpi backend joins the job, or at
// exit for the other commands. There they exchange what they captured;
// rank 0 prints it once if every rank captured the same, else each rank's
// text with every line prefixed "rank R: ". If any rank failed before the
// meeting, every rank exits 1. Errors after the meeting come from the
// ranks' own work and name their rank already (docs/mpi.md).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_JOBDIAGNOSTICS_H
#define SHARDC_TOOLS_JOBDIAGNOSTICS_H

#include <optional>

namespace shardc {
class MpiEnvironment;

/// This process's rank when mpirun started it (Open MPI's or PMI's
/// variables are set, even for one rank); none otherwise.
std::optional<int> mpirunRank();

/// Initializes MPI for a subcommand whose command line is parsed already
/// (mpirun passes what MPI needs in the environment) into `mpi`; false
/// after printing the error.
bool startMpiForCommand(std::optional<MpiEnvironment> &mpi);

/// Starts capturing stderr if this process is a rank of an mpirun job of
/// more than one rank; does nothing otherwise.
void startCapturingJobDiagnostics();

/// The meeting (collective, MPI initialized); `failed` says whether this
/// rank failed before it. Returns false if any rank did. A no-op returning
/// true when not capturing or already met.
bool meetRanks(bool failed);

/// For the end of main: if the ranks have not met, initializes MPI, meets
/// and finalizes it. Returns the exit code: `code`, or 1 if another rank
/// failed before the meeting.
int finishJobDiagnostics(int code);

} // namespace shardc

#endif // SHARDC_TOOLS_JOBDIAGNOSTICS_H
