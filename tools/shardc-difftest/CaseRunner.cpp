//===- CaseRunner.cpp - checking one generated case -----------------------===//

#include "CaseRunner.h"

#include "shardc/Interpreter/RoundingSensitivity.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Engine/ShardedEngine.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/RoundingSensitivity.h"
#include "shardc/Runtime/DeviceLayout.h"
#include "shardc/Runtime/ShardedExecution.h"
#include "shardc/Runtime/ThreadsBackend.h"
#include "shardc/Support/NumericCheck.h"
#include "shardc/Support/RandomTensor.h"
#include "shardc/Transforms/Passes.h"
#include "shardc/Transforms/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace shardc;

namespace {

/// The program the case checks: the generated one, its VJP, or its
/// training step, built on the global program by the pipelines `shardc
/// simulate --autodiff` and the engine use (propagation first, so that
/// cotangents, gradients and optimizer state are laid out like their
/// values). Those differentiate the composites with a gradient rule of
/// their own before expanding them, so the case checks those rules too;
/// the reference interpreter runs the expanded primitives.
LogicalResult buildProgram(const GeneratedCase &c, ModuleOp module) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (c.kind == ProgramKind::Autodiff) {
    ShardcAutodiffOptions options;
    options.wrt.assign(c.wrt.begin(), c.wrt.end());
    buildAutodiffPipeline(pm, options, /*propagateFirst=*/true,
                          ShardingStage::None);
  } else if (c.kind == ProgramKind::TrainStep) {
    OptimizerOptions optimizer;
    optimizer.kind = c.train.adam ? OptimizerOptions::Kind::Adam
                                  : OptimizerOptions::Kind::Sgd;
    optimizer.zeroAxes = c.train.zeroAxes;
    buildTrainPipeline(pm, getOptimizerPassOptions(optimizer, {}),
                       /*propagateFirst=*/true, ShardingStage::None);
  } else {
    pm.addPass(createShardcDecompose());
  }
  return pm.run(module);
}

/// Inputs of the program by argument: the generated inputs in their
/// domains, optimizer state at its initial value, the learning rate, and
/// cotangents in [-1, 1).
FailureOr<SmallVector<Tensor>> makeInputs(const GeneratedCase &c,
                                          func::FuncOp func, uint64_t seed,
                                          std::string &why) {
  SmallVector<Tensor> inputs;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = getArgumentName(func, i);
    auto shape = cast<RankedTensorType>(func.getArgumentTypes()[i]).getShape();
    llvm::Expected<std::optional<Tensor>> state =
        initialOptimizerState(func, i);
    if (!state) {
      why = llvm::toString(state.takeError());
      return failure();
    }
    if (*state) {
      inputs.push_back(std::move(**state));
      continue;
    }
    InputDomain domain = InputDomain::Uniform;
    StringRef number(name);
    unsigned k;
    if (number.consume_front("in") && !number.getAsInteger(10, k) &&
        k < c.domains.size())
      domain = c.domains[k];
    llvm::Expected<Tensor> t = fillInput(shape, domain, seed, name);
    if (!t) {
      why = llvm::toString(t.takeError());
      return failure();
    }
    if (name == "learning_rate")
      for (float &v : t->values())
        v = c.train.learningRate;
    inputs.push_back(std::move(*t));
  }
  return inputs;
}

bool sameBits(const Tensor &a, const Tensor &b) {
  if (a.shape() != b.shape())
    return false;
  for (int64_t i = 0; i < a.numElements(); ++i)
    if (!(a.data()[i] == b.data()[i]) &&
        !(std::isnan(a.data()[i]) && std::isnan(b.data()[i])))
      return false;
  return true;
}

bool errorAt(const DiagnosticLog &log, StringRef name) {
  return llvm::any_of(log.errorLocs, [&](Location loc) {
    // The location may be wrapped (a callsite or fused location from a
    // pass); its name is what matters.
    bool found = false;
    loc->walk([&](Location inner) {
      if (auto n = dyn_cast<NameLoc>(inner); n && n.getName() == name)
        found = true;
      return WalkResult::advance();
    });
    return found;
  });
}

/// A global program holding a collective: neither the interpreter nor the
/// partitioner can give the collective a meaning on global data, and both
/// must say so at the collective. An empty answer: they did.
std::optional<std::string> checkRejected(const GeneratedCase &c,
                                         bool interpreted, bool partitioned,
                                         const DiagnosticLog &log) {
  if (interpreted)
    return "the reference interpreter ran a global program holding a "
           "collective";
  if (partitioned)
    return "the pipeline partitioned a global program holding a collective";
  if (!errorAt(log, c.collectiveName))
    return "no error points at the collective \"" + c.collectiveName + "\"";
  return std::nullopt;
}

/// Counts the partitioner paths the partitioned `func` took (see
/// CaseResult).
void countPartitionerPaths(func::FuncOp func, CaseResult &r) {
  func.walk([&](Operation *op) {
    if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      if (reduce.getReduction() == ReductionKind::Max &&
          isa_and_nonnull<ReduceMaxOp>(reduce.getInput().getDefiningOp()))
        ++r.maxReductions;
      return;
    }
    auto sharding =
        op->getAttrOfType<ShardingAttr>(ShardcDialect::getShardingAttrName());
    bool elementwise = op->hasTrait<shardc::OpTrait::UnaryElementwise>() ||
                       op->hasTrait<shardc::OpTrait::BinaryElementwise>();
    if (elementwise && sharding && sharding.isPartial())
      ++r.linearOnSummands;
  });
}

/// Moves the first element of `got` by `perturb` times the scale it is
/// judged on: a deliberately wrong result.
void perturbOutput(Tensor &got, const Tensor &want, double perturb,
                   double judgedOn) {
  if (perturb == 0 || got.numElements() == 0 || got.dtype() != DType::F32)
    return;
  double wantMax = 0;
  for (float w : want.values())
    if (std::isfinite(w))
      wantMax = std::max(wantMax, double(std::fabs(w)));
  got.data()[0] +=
      float(perturb * std::max(wantMax, kFamilyScaleFloor * judgedOn));
}

/// What the sharded run is compared with: the unsharded program's results
/// on the same inputs.
struct Reference {
  func::FuncOp func;
  ArrayRef<Tensor> inputs;
  ArrayRef<Tensor> outputs;
};

/// Compares the sharded `outputs` with the reference's, each within its
/// tolerance. An empty answer: all match.
std::optional<std::string> compareOutputs(const GeneratedCase &c,
                                          const Reference &ref,
                                          MutableArrayRef<Tensor> outputs,
                                          double tolerance, double perturb,
                                          CaseResult &r) {
  double scale = familyScale(ref.outputs);
  // An Adam step turns a gradient that is zero in exact arithmetic into a
  // full step in the direction its rounding noise picks: such an output
  // passes within how far the unsharded step moves under a one-ulp change
  // of its inputs (shardc/Interpreter/RoundingSensitivity.h). Nothing else
  // gets that allowance.
  FailureOr<SmallVector<double>> tolerances = roundingTolerances(
      ref.func, ref.inputs, ref.outputs, outputs, scale, tolerance);
  if (failed(tolerances))
    return std::string("the perturbed reference run failed");
  for (unsigned i = 0; i < outputs.size(); ++i) {
    const Tensor &want = ref.outputs[i];
    if (outputs[i].shape() != want.shape())
      return "output " + std::to_string(i) + " has shape " +
             outputs[i].describe() + ", the reference " + want.describe();
    // Float32 sums in another order differ by up to ~N eps times the
    // magnitude of their N terms, however much of it cancels: the error is
    // judged on at least kFamilyScaleFloor of the generator's bound on the
    // output, which for a sum is N times its terms' bound. At the default
    // tolerance an error passes below 1e-6 of the bound (N eps is 6e-8 N
    // of a term); a term missing from a sum of kMaxElements terms is 2.4e-2
    // of that floor, 244 times the tolerance.
    double bound = i < c.outputBounds.size() ? c.outputBounds[i] : 0.0;
    double judgedOn = std::isfinite(bound) ? std::max(scale, bound) : scale;
    perturbOutput(outputs[i], want, perturb, judgedOn);
    auto [rel, abs] = compareToReference(outputs[i], want,
                                         /*mismatch=*/nullptr, judgedOn);
    r.worstRel = std::max(r.worstRel, rel);
    if (!(rel <= (*tolerances)[i])) {
      std::string msg;
      llvm::raw_string_ostream(msg)
          << "output " << i << " differs from the unsharded program: "
          << "max_rel_err " << rel << " > " << (*tolerances)[i]
          << " (max_abs_err " << abs << ", family scale " << scale << ", bound "
          << bound << ")";
      return msg;
    }
  }
  return std::nullopt;
}

/// The threads backend runs the same program with its own collectives
/// (shared memory); it must give the simulator's bits. An empty answer: it
/// did.
std::optional<std::string> checkThreads(func::FuncOp func, MeshOp mesh,
                                        ArrayRef<Tensor> inputs,
                                        ArrayRef<Tensor> simulated,
                                        const DiagnosticLog &log) {
  ThreadsOptions threads;
  threads.blasThreadsPerDevice = 1;
  // A bug must fail the case, not hang the run.
  threads.timeoutSeconds = 60;
  std::unique_ptr<MeshBackend> backend = createThreadsBackend(mesh, threads);
  if (!backend)
    return std::string("threads backend: creation failed");
  size_t errorsBefore = log.errorLocs.size();
  FailureOr<std::vector<Tensor>> outputs =
      runGlobalOnBackend(*backend, func, mesh, inputs);
  if (failed(outputs) || log.errorLocs.size() != errorsBefore)
    return std::string("threads backend: the run failed");
  for (unsigned i = 0; i < outputs->size(); ++i)
    if (!sameBits((*outputs)[i], simulated[i]))
      return "threads backend: output " + std::to_string(i) +
             " differs from the simulated mesh's";
  return std::nullopt;
}

/// Runs the partitioned `func` on the simulated mesh (and maybe on
/// threads) and compares with the reference.
CaseResult runPartitioned(const GeneratedCase &c, ModuleOp module,
                          const Reference &ref, double tolerance,
                          const DiagnosticLog &log, double perturb) {
  CaseResult r;
  auto fail = [&](const Twine &why) {
    r.failed = true;
    r.reason = why.str();
    return r;
  };
  func::FuncOp func = getEntryFunction(module);
  auto meshes = llvm::to_vector(module.getOps<MeshOp>());
  if (meshes.size() != 1 || !func)
    return fail("pipeline output lost the mesh or the function");
  countPartitionerPaths(func, r);
  MeshOp mesh = meshes.front();
  FailureOr<ShardedRun> run = runOnSimulatedMesh(func, mesh, ref.inputs);
  if (failed(run) || !log.errorLocs.empty())
    return fail("simulation failed");
  r.collectives = run->report.collectives.size();
  if (run->outputs.size() != ref.outputs.size())
    return fail("the simulation returned " + Twine(run->outputs.size()) +
                " outputs, the reference " + Twine(ref.outputs.size()));
  if (auto why = compareOutputs(c, ref, run->outputs, tolerance, perturb, r))
    return fail(*why);
  if (!c.threads)
    return r;
  r.ranThreads = true;
  if (auto why = checkThreads(func, mesh, ref.inputs, run->outputs, log))
    return fail(*why);
  return r;
}

} // namespace

CaseResult shardc::runCase(const GeneratedCase &c, uint64_t inputSeed,
                           double tolerance, DiagnosticLog &log,
                           double perturb) {
  CaseResult r;
  auto fail = [&](const Twine &why) {
    r.failed = true;
    r.reason = why.str();
    return r;
  };
  auto errorsSoFar = [&] { return log.errorLocs.size(); };

  OwningOpRef<ModuleOp> module = c.module.get().clone();
  if (failed(buildProgram(c, *module)) || errorsSoFar())
    return fail(Twine(stringifyProgramKind(c.kind)) +
                ": building the program failed");
  func::FuncOp func = getEntryFunction(*module);
  if (!func)
    return fail("the module has no function");
  std::string why;
  FailureOr<SmallVector<Tensor>> inputs = makeInputs(c, func, inputSeed, why);
  if (failed(inputs))
    return fail("inputs: " + why);

  OwningOpRef<ModuleOp> reference = module->clone();
  FailureOr<SmallVector<Tensor>> expected =
      interpretFunction(getEntryFunction(*reference), *inputs);
  PassManager pm(module->getContext(), ModuleOp::getOperationName());
  buildPartitionPipeline(pm);
  LogicalResult partitioned = pm.run(*module);

  if (c.kind == ProgramKind::GlobalCollective) {
    if (auto why =
            checkRejected(c, succeeded(expected), succeeded(partitioned), log))
      return fail(*why);
    return r;
  }
  if (failed(expected) || errorsSoFar())
    return fail("reference interpreter failed");
  if (failed(partitioned) || errorsSoFar())
    return fail("propagate/partition pipeline failed");
  return runPartitioned(
      c, *module, Reference{getEntryFunction(*reference), *inputs, *expected},
      tolerance, log, perturb);
}
