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
#include "SharedOptions.h"
#include "ToolCommon.h"
#include "shardc/Driver/ReferenceCheck.h"

#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/Npy.h"

#include "mlir/Pass/PassManager.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <chrono>

using namespace mlir;
using namespace shardc;
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

namespace {

/// The program exec runs, in place: the global model, made the training
/// step by --autodiff and planned by --auto-shard. Fails after a message.
LogicalResult prepareProgram(MLIRContext &context, ModuleOp module,
                             func::FuncOp func) {
  if (func->hasAttr(ShardcDialect::getSpmdAttrName())) {
    llvm::errs() << "shardc: error: exec takes the global program; this one "
                    "is already partitioned\n";
    return failure();
  }
  // --autodiff: the program run (and checked) is the training step, its
  // cotangents being inputs like any other. Propagating first lays each
  // cotangent out like its value, as `simulate --autodiff` does.
  if (failed(applyAutodiff(module, /*propagateFirst=*/true)))
    return failure();
  // --auto-shard: the plan is written into the program as annotations (and
  // sharding constraints), which the engine's propagation then follows.
  FailureOr<std::optional<ShardcAutoShardOptions>> autoShard =
      getAutoShardOptions();
  if (failed(autoShard))
    return failure();
  if (!*autoShard)
    return success();
  PassManager pm(&context, ModuleOp::getOperationName());
  pm.addPass(createShardcAutoShard(**autoShard));
  return pm.run(module);
}

/// The engine and what its forward pass returned; the mean seconds of the
/// --repeat runs.
struct EngineRun {
  std::unique_ptr<ShardedEngine> engine;
  std::vector<Tensor> outputs;
  double secondsPerRun = 0;
};

/// Compiles `module` into an engine and runs its forward pass on `args`
/// (`func`'s arguments), each handed over by name: parameters by
/// loadCheckpoint, the rest as forward's inputs.
FailureOr<EngineRun> runOnEngine(OwningOpRef<ModuleOp> module,
                                 func::FuncOp func, ArrayRef<Tensor> args,
                                 const EngineOptions &options) {
  llvm::StringMap<unsigned> argIndex;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    argIndex[getArgumentName(func, i)] = i;
  FailureOr<std::unique_ptr<ShardedEngine>> engine =
      ShardedEngine::compile(std::move(module), options);
  if (failed(engine))
    return failure();
  EngineRun run;
  run.engine = std::move(*engine);
  std::map<std::string, Tensor> checkpoint;
  for (const std::string &name : run.engine->parameterNames())
    checkpoint.emplace(name, args[argIndex[name]].clone());
  if (!checkpoint.empty() && failed(run.engine->loadCheckpoint(checkpoint)))
    return failure();
  std::vector<Tensor> inputs;
  for (const std::string &name : run.engine->inputNames())
    inputs.push_back(args[argIndex[name]].clone());
  backendOptions.injectTestFault(*run.engine);
  FailureOr<std::vector<Tensor>> outputs = run.engine->forward(inputs);
  if (failed(outputs))
    return failure();
  run.outputs = std::move(*outputs);
  if (repeat == 0)
    return run;
  auto start = std::chrono::steady_clock::now();
  for (unsigned r = 0; r < repeat; ++r)
    if (failed(run.engine->forward(inputs)))
      return failure();
  run.secondsPerRun =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count() /
      repeat;
  return run;
}

/// Writes output `name` as <--out-dir>/<name>.npy.
LogicalResult writeOutput(StringRef name, const Tensor &output) {
  (void)llvm::sys::fs::create_directories(execOutDir.getValue());
  SmallString<128> path(execOutDir.getValue());
  llvm::sys::path::append(path, name + ".npy");
  if (llvm::Error err = writeNpy(path, output)) {
    llvm::errs() << "shardc: error: " << llvm::toString(std::move(err)) << "\n";
    return failure();
  }
  return success();
}

/// Every output against the reference `expected`: whether all passed (the
/// mismatches reported), each one's error and the rounding tolerances, and
/// --out-dir written by the printing process.
struct OutputCheck {
  bool ok = true;
  double worst = 0;
  SmallVector<double> errors, tolerances;
};

FailureOr<OutputCheck>
checkOutputs(func::FuncOp reference, ArrayRef<Tensor> args,
             ArrayRef<Tensor> expected, ArrayRef<Tensor> outputs,
             ArrayRef<std::string> outputNames, bool printing) {
  OutputCheck check;
  double scale = shardc::familyScale(expected);
  FailureOr<SmallVector<double>> tolerances = roundingTolerances(
      reference, args, expected, outputs, scale, execTolerance);
  if (failed(tolerances))
    return failure();
  check.tolerances = std::move(*tolerances);
  for (auto [i, name] : llvm::enumerate(outputNames)) {
    double rel = checkAgainstReference(
                     outputs[i], expected[i], scale, check.tolerances[i],
                     "output '" + name + "'", "the unsharded program", check.ok)
                     .first;
    check.errors.push_back(rel);
    check.worst = std::max(check.worst, rel);
    if (!execOutDir.empty() && printing &&
        failed(writeOutput(name, outputs[i])))
      return failure();
  }
  return check;
}

/// The printing process's report: warnings, the summary line, and the
/// parameters saved when asked.
LogicalResult report(func::FuncOp reference, ArrayRef<Tensor> args,
                     ArrayRef<Tensor> expected, const EngineRun &run,
                     ArrayRef<std::string> outputNames,
                     const OutputCheck &check, BackendKind backend) {
  warnAboutNonFiniteOutputs(reference, args, expected, outputNames);
  printRoundingAmplified(llvm::outs(), "the program", "the unsharded program",
                         "its inputs or its sums", outputNames, check.errors,
                         check.tolerances, execTolerance, expected,
                         workingHalfType(reference));
  llvm::outs() << "backend=" << stringifyBackendKind(backend)
               << " devices=" << run.engine->numDevices()
               << " outputs=" << outputNames.size()
               << llvm::format(" max_rel_err=%.3g", check.worst);
  if (repeat > 0)
    llvm::outs() << llvm::format(" time/run=%.6gs", run.secondsPerRun);
  llvm::outs() << (check.ok ? " OK" : " MISMATCH") << "\n";
  return saveParametersIfAsked(reference, args, run.outputs);
}

} // namespace

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
  if (failed(prepareProgram(session.getContext(), *module, func)))
    return 1;
  func = getEntryFunction(*module);
  FailureOr<SmallVector<Tensor>> args = gatherInputs(func);
  if (failed(args))
    return 1;
  std::vector<std::string> outputNames = getResultNames(func);
  // The reference: the unsharded program on the same inputs.
  OwningOpRef<ModuleOp> reference = module->clone();
  func::FuncOp referenceFunc = getEntryFunction(*reference);
  FailureOr<SmallVector<Tensor>> expected =
      interpretFunction(referenceFunc, *args);
  if (failed(expected))
    return 1;
  FailureOr<EngineRun> run =
      runOnEngine(std::move(module), func, *args, options);
  if (failed(run))
    return 1;
  bool printing = isPrintingProcess(*run->engine);
  FailureOr<OutputCheck> check = checkOutputs(
      referenceFunc, *args, *expected, run->outputs, outputNames, printing);
  if (failed(check))
    return 1;
  if (printing && failed(report(referenceFunc, *args, *expected, *run,
                                outputNames, *check, options.backend)))
    return 1;
  return check->ok ? 0 : 1;
}
