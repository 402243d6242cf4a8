//===- ExecCommand.cpp - `shardc exec` ------------------------------------===//
//
// Compile the model once into a ShardedEngine, run its forward pass on a
// real backend (or the simulator), and check every output against the
// reference interpreter on the unsharded program with the same inputs.
// `simulate` is the instrumented view of one run; `exec` is the run itself.
//
//===----------------------------------------------------------------------===//

#include "EngineSession.h"
#include "ParameterSave.h"
#include "ReferenceCheck.h"
#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/Npy.h"

#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <chrono>

using namespace mlir;
using shardc::Tensor;
namespace cl = llvm::cl;

static shardc::BackendOptions backendOptions(shardc::execCommand);
static cl::opt<std::string>
    execOutDir("out-dir", cl::desc("Write each output as <name>.npy"),
               cl::init(""), cl::sub(shardc::execCommand));
static cl::opt<double> execTolerance(
    "tolerance",
    cl::desc("Largest accepted max_rel_err against the unsharded program"),
    cl::init(1e-5), cl::sub(shardc::execCommand));
static cl::opt<unsigned>
    repeat("repeat",
           cl::desc("Run the forward pass this many times (after one warm-up "
                    "run) and print the mean time per run"),
           cl::init(0), cl::sub(shardc::execCommand));

int shardc::runExecCommand() {
  ToolSession session;
  func::FuncOp func;
  OwningOpRef<ModuleOp> module =
      session.loadInputModel(&func, /*expandComposites=*/true);
  if (!module)
    return 1;
  EngineOptions options;
  std::optional<MpiEnvironment> mpi; // outlives the engine
  if (failed(backendOptions.apply(options, mpi, session.getContext(), func)))
    return 1;
  options.training = false;
  if (func->hasAttr(ShardcDialect::getSpmdAttrName())) {
    llvm::errs() << "shardc: error: exec takes the global program; this one "
                    "is already partitioned\n";
    return 1;
  }
  // --autodiff: the program run (and checked) is the training step, its
  // cotangents being inputs like any other. Propagating first lays each
  // cotangent out like its value, as `simulate --autodiff` does.
  if (failed(applyAutodiff(*module, /*propagateFirst=*/true)))
    return 1;
  // --auto-shard: the plan is written into the program as annotations (and
  // sharding constraints), which the engine's propagation then follows.
  FailureOr<std::optional<ShardcAutoShardOptions>> autoShard =
      getAutoShardOptions();
  if (failed(autoShard))
    return 1;
  if (*autoShard) {
    PassManager pm(&session.getContext(), ModuleOp::getOperationName());
    pm.addPass(createShardcAutoShard(**autoShard));
    if (failed(pm.run(*module)))
      return 1;
  }
  func = getEntryFunction(*module);
  FailureOr<SmallVector<Tensor>> args = gatherInputs(func);
  if (failed(args))
    return 1;
  std::vector<std::string> outputNames = getResultNames(func);

  // The reference: the unsharded program on the same inputs.
  OwningOpRef<ModuleOp> reference = module->clone();
  FailureOr<SmallVector<Tensor>> expected =
      interpretFunction(getEntryFunction(*reference), *args);
  if (failed(expected))
    return 1;

  // Every argument is handed over by name: parameters by loadCheckpoint,
  // the rest as forward's inputs.
  llvm::StringMap<unsigned> argIndex;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    argIndex[getArgumentName(func, i)] = i;
  FailureOr<std::unique_ptr<ShardedEngine>> engine =
      ShardedEngine::compile(std::move(module), options);
  if (failed(engine))
    return 1;
  std::map<std::string, Tensor> checkpoint;
  for (const std::string &name : (*engine)->parameterNames())
    checkpoint.emplace(name, (*args)[argIndex[name]].clone());
  if (!checkpoint.empty() && failed((*engine)->loadCheckpoint(checkpoint)))
    return 1;
  std::vector<Tensor> inputs;
  for (const std::string &name : (*engine)->inputNames())
    inputs.push_back((*args)[argIndex[name]].clone());

  backendOptions.injectTestFault(**engine);
  FailureOr<std::vector<Tensor>> outputs = (*engine)->forward(inputs);
  if (failed(outputs))
    return 1;
  double seconds = 0;
  if (repeat > 0) {
    auto start = std::chrono::steady_clock::now();
    for (unsigned r = 0; r < repeat; ++r)
      if (failed((*engine)->forward(inputs)))
        return 1;
    seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count() /
        repeat;
  }

  bool printing = isPrintingProcess(**engine);
  bool ok = true;
  double worst = 0;
  double scale = shardc::familyScale(*expected);
  FailureOr<SmallVector<double>> tolerances =
      roundingTolerances(getEntryFunction(*reference), *args, *expected,
                         *outputs, scale, execTolerance);
  if (failed(tolerances))
    return 1;
  SmallVector<double> errors;
  for (auto [i, name] : llvm::enumerate(outputNames)) {
    double rel = checkAgainstReference((*outputs)[i], (*expected)[i], scale,
                                       (*tolerances)[i], "output '" + name + "'",
                                       "the unsharded program", ok)
                     .first;
    errors.push_back(rel);
    worst = std::max(worst, rel);
    if (!execOutDir.empty() && printing) {
      (void)llvm::sys::fs::create_directories(execOutDir.getValue());
      SmallString<128> path(execOutDir.getValue());
      llvm::sys::path::append(path, name + ".npy");
      if (llvm::Error err = writeNpy(path, (*outputs)[i])) {
        llvm::errs() << "shardc: error: " << llvm::toString(std::move(err))
                     << "\n";
        return 1;
      }
    }
  }
  if (printing)
    warnAboutNonFiniteOutputs(getEntryFunction(*reference), *args, *expected,
                              outputNames);
  if (printing)
    printRoundingAmplified(llvm::outs(), "the program", "the unsharded program",
                           "its inputs", outputNames, errors, *tolerances,
                           execTolerance, *expected,
                           workingHalfType(getEntryFunction(*reference)));
  if (printing) {
    llvm::outs() << "backend=" << stringifyBackendKind(options.backend)
                 << " devices=" << (*engine)->numDevices()
                 << " outputs=" << outputNames.size()
                 << llvm::format(" max_rel_err=%.3g", worst);
    if (repeat > 0)
      llvm::outs() << llvm::format(" time/run=%.6gs", seconds);
    llvm::outs() << (ok ? " OK" : " MISMATCH") << "\n";
    if (failed(saveParametersIfAsked(getEntryFunction(*reference), *args,
                                     *outputs)))
      return 1;
  }
  return ok ? 0 : 1;
}
