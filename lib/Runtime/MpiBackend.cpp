//===- MpiBackend.cpp - one process per device over Open MPI --------------===//
//
// The backend is thin: the interpreter runs this rank's program and its
// collectives reach the other ranks through the MpiCommunicator. What is
// here is the job's life cycle (MPI_Init / MPI_Finalize), the check that
// the job matches the mesh, and the abort policy for a failing rank.
//
//===----------------------------------------------------------------------===//

#include "shardc/Runtime/MpiBackend.h"

#include "MpiSupport.h"
#include "TracingCommunicator.h"
#include "shardc/Runtime/RetainFreedMemory.h"

#include "shardc/Interpreter/BlasThreads.h"
#include "shardc/Interpreter/Interpreter.h"

#include <limits>
#include <optional>

using namespace mlir;
using namespace shardc;

//===----------------------------------------------------------------------===//
// MPI's life cycle
//===----------------------------------------------------------------------===//

bool shardc::isMpiInitialized() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

llvm::Expected<std::vector<std::string>>
shardc::gatherTextFromEveryRank(llvm::StringRef text) {
  if (!isMpiInitialized())
    return llvm::createStringError("MPI is not initialized");
  int size = 1;
  int rc = MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (text.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return llvm::createStringError("text too long to exchange");
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(size), offsets(size);
  if (rc == MPI_SUCCESS)
    rc = MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT,
                       MPI_COMM_WORLD);
  int64_t total = 0;
  for (int r = 0; r < size && rc == MPI_SUCCESS; ++r) {
    offsets[r] = static_cast<int>(total);
    total += lengths[r];
    if (total > std::numeric_limits<int>::max())
      return llvm::createStringError("texts too long to exchange");
  }
  std::string all(static_cast<size_t>(total), '\0');
  if (rc == MPI_SUCCESS)
    rc = MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(),
                        lengths.data(), offsets.data(), MPI_CHAR,
                        MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS)
    return llvm::createStringError("exchanging text between the ranks "
                                   "failed: " +
                                   detail::mpiErrorString(rc));
  std::vector<std::string> texts;
  for (int r = 0; r < size; ++r)
    texts.push_back(all.substr(offsets[r], lengths[r]));
  return texts;
}

llvm::Expected<MpiEnvironment> shardc::initializeMpi(int &argc, char **&argv) {
  int finalized = 0, initialized = 0;
  MPI_Finalized(&finalized);
  if (finalized)
    return llvm::createStringError("MPI was already finalized in this process");
  MPI_Initialized(&initialized);
  bool owns = false;
  if (!initialized) {
    // Serialized: the engine may call MPI from more than one thread, never
    // from two at once.
    int provided = 0;
    int rc = MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS)
      return llvm::createStringError("MPI_Init_thread failed: " +
                                     detail::mpiErrorString(rc));
    owns = true;
  }
  int rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rc != MPI_SUCCESS) {
    std::string why = detail::mpiErrorString(rc);
    if (owns)
      MPI_Finalize();
    return llvm::createStringError("setting up MPI_COMM_WORLD failed: " + why);
  }
  return MpiEnvironment(owns, rank, size);
}

MpiEnvironment::MpiEnvironment(MpiEnvironment &&other) noexcept
    : owns(other.owns), worldRank(other.worldRank), worldSize(other.worldSize) {
  other.owns = false;
}

MpiEnvironment::~MpiEnvironment() {
  if (owns && isMpiInitialized())
    MPI_Finalize();
}

//===----------------------------------------------------------------------===//
// The backend
//===----------------------------------------------------------------------===//

MpiBackend::MpiBackend(std::unique_ptr<MpiCommunicator> communicator,
                       bool abort)
    : communicator(std::move(communicator)), abortOnFailure(abort) {
  local.push_back(this->communicator->deviceId());
}

int64_t MpiBackend::numDevices() const { return communicator->numDevices(); }

LogicalResult shardc::checkMpiJobFitsMesh(MeshOp mesh) {
  if (!isMpiInitialized())
    return mesh.emitError("the mpi backend needs MPI, which this process has "
                          "not initialized (the tool must call "
                          "initializeMpi)");
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return failure();
  int size = 1;
  if (int rc = MPI_Comm_size(MPI_COMM_WORLD, &size); rc != MPI_SUCCESS)
    return mesh.emitError()
           << "MPI_Comm_size failed: " << detail::mpiErrorString(rc);
  // Every rank sees the same mesh and world, so all fail here alike and
  // nobody is left waiting.
  if (topology->numDevices() != size)
    return mesh.emitError()
           << "mesh @" << mesh.getSymName() << " has " << topology->numDevices()
           << " devices but the MPI job has " << size << " rank"
           << (size == 1 ? "" : "s")
           << "; the mpi backend runs one rank per device: launch it with "
              "`mpirun -n "
           << topology->numDevices() << " ...`";
  return success();
}

FailureOr<std::unique_ptr<MpiBackend>>
shardc::createMpiBackend(MeshOp mesh, MpiCommunicatorOptions options) {
  if (failed(checkMpiJobFitsMesh(mesh)))
    return failure();
  if (options.retainFreedMemory)
    retainFreedMemory();
  FailureOr<MeshTopology> topology = getMeshTopology(mesh);
  if (failed(topology))
    return failure();
  FailureOr<std::unique_ptr<MpiCommunicator>> communicator =
      MpiCommunicator::create(mesh->getContext(), options);
  if (failed(communicator) || failed((*communicator)->prepareGroups(*topology)))
    return failure();
  return std::unique_ptr<MpiBackend>(
      new MpiBackend(std::move(*communicator), options.abortOnFailure));
}

FailureOr<DeviceTensors> MpiBackend::run(func::FuncOp spmd,
                                         const DeviceTensors &args) {
  int64_t device = local.front();
  auto fail = [&](const llvm::Twine &why) -> FailureOr<DeviceTensors> {
    std::string text =
        ("device " + llvm::Twine(device) + " (MPI rank " + llvm::Twine(device) +
         " of " + llvm::Twine(numDevices()) + ") failed running @" +
         spmd.getSymName() + ": " + why)
            .str();
    if (abortOnFailure)
      abortMpiJob(text);
    return spmd.emitError(text);
  };
  if (args.size() != 1)
    return fail("the mpi backend runs one device per process, so it takes "
                "the arguments of 1 device, not " +
                llvm::Twine(args.size()));
  InterpreterOptions options;
  options.communicator = communicator.get();
  ScopedBlasThreads blas(kDeviceBlasThreads); // the bits of every backend
  std::optional<detail::DeviceTimeline> timeline;
  std::optional<detail::TracingCommunicator> traced;
  trace.clear();
  if (tracing) {
    timeline.emplace(device, detail::DeviceTimeline::Clock::now());
    traced.emplace(*communicator, *timeline);
    options.communicator = &*traced;
  }
  FailureOr<SmallVector<Tensor>> results =
      interpretFunction(spmd, args.front(), options);
  if (timeline)
    trace = timeline->finish();
  if (failed(results))
    return fail("see the error above");
  DeviceTensors out(1);
  for (Tensor &t : *results)
    out.front().push_back(std::move(t));
  return out;
}

FailureOr<std::vector<Tensor>>
MpiBackend::gatherBlocks(std::vector<Tensor> localBlocks) {
  if (localBlocks.size() != 1)
    return communicator->fail("gatherBlocks takes this rank's one block, "
                              "got " +
                              llvm::Twine(localBlocks.size()));
  return communicator->gatherFromEveryRank(std::move(localBlocks.front()));
}
