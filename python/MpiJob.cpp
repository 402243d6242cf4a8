//===- MpiJob.cpp - the MPI job a Python process belongs to ---------------===//

#include "MpiJob.h"
#include "Errors.h"

#include <optional>

using namespace shardc;

static std::optional<MpiEnvironment> &job() {
  static std::optional<MpiEnvironment> environment;
  return environment;
}

MpiEnvironment &python::joinMpiJob() {
  if (!job()) {
    // mpirun hands MPI what it needs in the environment; Python's own
    // arguments are not MPI's.
    int argc = 0;
    char **argv = nullptr;
    llvm::Expected<MpiEnvironment> environment = initializeMpi(argc, argv);
    if (!environment)
      raiseError("cannot join the MPI job: " +
                 llvm::toString(environment.takeError()));
    job().emplace(std::move(*environment));
  }
  return *job();
}

void python::finalizeMpiJob() { job().reset(); }

void python::checkMpiJobSize(MpiEnvironment &environment, int64_t numDevices,
                             const std::string &what) {
  if (environment.size() == numDevices)
    return;
  raiseError(what + " runs one device per MPI rank: it needs " +
             std::to_string(numDevices) + " ranks but the job has " +
             std::to_string(environment.size()) +
             " (start it with `mpirun -n " + std::to_string(numDevices) +
             " python3 ...`)");
}
