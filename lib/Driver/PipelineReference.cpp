//===- PipelineReference.cpp - pipelined steps against unsharded ones -----===//
//
// The reference of a pipelined training (shardc/Driver/PipelineTraining.h):
// the same number of unsharded full-batch steps, and the check of every
// device's parameters and loss against them.
//
//===----------------------------------------------------------------------===//

#include "shardc/Driver/PipelineTraining.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/NumericCheck.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace shardc;

namespace {

/// `step`'s arguments for its first step: `inputs`, the learning rate and
/// the optimizer state at its initial value.
FailureOr<std::vector<Tensor>> firstStepArguments(func::FuncOp step,
                                                  ArrayRef<Tensor> inputs,
                                                  double learningRate) {
  std::vector<Tensor> args;
  for (const Tensor &t : inputs)
    args.push_back(t.clone());
  llvm::Expected<Tensor> lr = Tensor::allocate({});
  if (!lr)
    return step.emitError() << llvm::toString(lr.takeError());
  lr->values()[0] = float(learningRate);
  args.push_back(std::move(*lr));
  while (args.size() < step.getNumArguments()) {
    FailureOr<Tensor> state = initialStateOf(step, args.size());
    if (failed(state))
      return failure();
    args.push_back(std::move(*state));
  }
  return args;
}

} // namespace

FailureOr<PipelineReference>
shardc::runPipelineReference(ModuleOp reference, ArrayRef<Tensor> inputs,
                             const PipelineTrainingOptions &options,
                             unsigned sumRoundingProbe) {
  // The optimizer rewrites the function in place: the original's argument
  // names are read first.
  std::vector<std::string> argNames;
  func::FuncOp original = getEntryFunction(reference);
  for (unsigned i = 0; i < original.getNumArguments(); ++i)
    argNames.push_back(getArgumentName(original, i));
  PassManager pm(reference.getContext(), ModuleOp::getOperationName());
  ShardcTrainingStepOptions optimizer;
  optimizer.optimizer = options.pipeline.optimizer.optimizer;
  pm.addPass(createShardcTrainingStep(optimizer));
  if (failed(pm.run(reference)))
    return failure();
  func::FuncOp step = getEntryFunction(reference);
  FailureOr<std::vector<Tensor>> args =
      firstStepArguments(step, inputs, options.learningRate);
  if (failed(args))
    return failure();
  std::vector<Tensor> results;
  for (int64_t s = 0; s < options.steps; ++s) {
    InterpreterOptions interpreter;
    interpreter.sumRoundingProbe = sumRoundingProbe;
    FailureOr<SmallVector<Tensor>> out =
        interpretFunction(step, *args, interpreter);
    if (failed(out))
      return failure();
    results.assign(std::make_move_iterator(out->begin()),
                   std::make_move_iterator(out->end()));
    if (s + 1 < options.steps)
      feedResultsBack(step, *args, results);
  }
  PipelineReference result;
  result.loss = std::move(results[0]);
  for (unsigned r = 0; r < step.getNumResults(); ++r)
    if (auto name = step.getResultAttrOfType<StringAttr>(
            r, ShardcDialect::getNextAttrName()))
      for (auto [i, argName] : llvm::enumerate(argNames))
        if (argName == name.getValue())
          result.next[i] = std::move(results[r]);
  return result;
}

namespace {

/// The tolerance of each parameter's block on a device: the given one, or
/// for Adam, which amplifies rounding (shardc::hasAdaptiveOptimizerState),
/// what NumericCheck's excusedTolerance allows given how far the reference
/// moves each element under the probes (inputs one ulp, sums rounded one ulp
/// otherwise). The probes run once, for the first block that needs them.
class ToleranceOf {
public:
  ToleranceOf(PipelineTrainingPlan &plan, const PipelineReference &reference,
              ArrayRef<Tensor> inputs, const PipelineTrainingOptions &options,
              double scale)
      : plan(plan), reference(reference), inputs(inputs), options(options),
        scale(scale) {}

  /// `got`, device `device`'s block of `param` under `sharding`, against
  /// `want`, the reference's block.
  FailureOr<double> operator()(int64_t param, int64_t device,
                               ShardingAttr sharding, const Tensor &got,
                               const Tensor &want) {
    double tolerance = options.tolerance;
    if (param < 0 || !(tolerance > 0) ||
        options.pipeline.optimizer.optimizer != "adam")
      return tolerance;
    if (!measured && failed(measure()))
      return failure();
    auto it = movement.find(param);
    if (it == movement.end())
      return tolerance;
    FailureOr<Tensor> block =
        stageBlockOf(plan.program, device, it->second, sharding);
    if (failed(block))
      return failure();
    std::vector<double> moved(block->values().begin(), block->values().end());
    return excusedTolerance(got, want, moved, scale, tolerance);
  }

private:
  LogicalResult measure() {
    for (const auto &[p, want] : reference.next) {
      if (want.dtype() != DType::F32)
        continue; // judged as it is
      Tensor zeros = want.clone();
      llvm::fill(zeros.values(), 0.0f);
      movement.try_emplace(p, std::move(zeros));
    }
    for (unsigned probe = 0; probe < 2 * kSensitivityProbes; ++probe) {
      bool inputProbe = probe < kSensitivityProbes;
      SmallVector<Tensor> perturbed;
      for (const Tensor &t : inputs)
        perturbed.push_back(inputProbe ? perturbByOneUlp(t, std::nullopt, probe)
                                       : t.clone());
      // The optimizer rewrites the module it runs on: each probe on a copy.
      OwningOpRef<ModuleOp> module = plan.perturbedModule->clone();
      FailureOr<PipelineReference> moved = runPipelineReference(
          *module, perturbed, options, inputProbe ? 0 : probe);
      if (failed(moved))
        return failure();
      for (const auto &[p, want] : reference.next) {
        auto it = movement.find(p);
        if (it == movement.end())
          continue;
        Tensor &sofar = it->second;
        std::vector<double> m(want.numElements(), 0.0);
        for (auto [e, v] : llvm::enumerate(sofar.values()))
          m[e] = v;
        noteElementMovement(moved->next.find(p)->second, want, m);
        for (auto [e, v] : llvm::enumerate(sofar.values()))
          v = float(m[e]);
      }
    }
    measured = true;
    return success();
  }

  PipelineTrainingPlan &plan;
  const PipelineReference &reference;
  ArrayRef<Tensor> inputs;
  const PipelineTrainingOptions &options;
  double scale;
  bool measured = false;
  /// Per parameter, how far the probes moved each element (as a tensor of
  /// the parameter's shape, so a device's block is cut as its value's is).
  llvm::DenseMap<int64_t, Tensor> movement;
};

} // namespace

FailureOr<PipelineTrainingCheck> shardc::checkPipelineTraining(
    PipelineTrainingPlan &plan, const PipelineTrainingRun &run,
    const PipelineReference &reference, ArrayRef<Tensor> inputs,
    const PipelineTrainingOptions &options) {
  std::vector<Tensor> referenceParams;
  for (const auto &entry : reference.next)
    referenceParams.push_back(entry.second.clone());
  double scale = familyScale(referenceParams);
  ToleranceOf toleranceOf(plan, reference, inputs, options, scale);
  PipelineTrainingCheck check;
  llvm::raw_string_ostream vs(check.verdicts);
  for (int64_t d : run.localDevices) {
    const PipelineStage &stage = plan.program.stages[run.stageOf[d]];
    for (auto [r, param] : llvm::enumerate(stage.resultParams)) {
      if (param == -2)
        continue; // optimizer state: it shows in the parameters
      // A sharded stage's device holds its block of each parameter.
      FailureOr<Tensor> want = stageBlockOf(
          plan.program, d,
          param < 0 ? reference.loss : reference.next.find(param)->second,
          func::FuncOp(stage.program)
              .getResultAttrOfType<ShardingAttr>(
                  r, ShardcDialect::getShardingAttrName()));
      if (failed(want))
        return failure();
      std::string what = param < 0
                             ? std::string("loss")
                             : getArgumentName(plan.func, param) + ".next";
      double rel =
          compareToReference(run.results[d][r], *want, nullptr, scale).first;
      check.worstRelativeError = std::max(check.worstRelativeError, rel);
      if (rel <= options.tolerance)
        continue;
      FailureOr<double> allowed =
          toleranceOf(param, d,
                      func::FuncOp(stage.program)
                          .getResultAttrOfType<ShardingAttr>(
                              r, ShardcDialect::getShardingAttrName()),
                      run.results[d][r], *want);
      if (failed(allowed))
        return failure();
      if (rel <= *allowed) {
        if (!StringRef(check.amplified).contains(what))
          check.amplified +=
              (check.amplified.empty() ? "" : ", ") + what +
              llvm::formatv(" within {0}", llvm::format("%.3g", *allowed))
                  .str();
        continue;
      }
      check.ok = false;
      vs << "device " << d << ": " << what << " differs from the "
         << "unsharded full-batch step: max_rel_err=" << rel << "\n";
    }
  }
  return check;
}

FailureOr<PipelineTrainingCheck>
shardc::gatherCheckFromEveryRank(const PipelineTrainingCheck &check) {
  // Every digit of the error: std::to_string's six decimals would make a
  // rank's 8.9e-08 a 0 in the job's worst.
  llvm::Expected<std::vector<std::string>> all = gatherTextFromEveryRank(
      (check.ok ? "1" : "0") +
      llvm::formatv("{0}", llvm::format("%.17g", check.worstRelativeError))
          .str() +
      "\n" + check.verdicts);
  if (!all) {
    llvm::errs() << "shardc: error: " << llvm::toString(all.takeError())
                 << "\n";
    return failure();
  }
  PipelineTrainingCheck combined = check;
  combined.verdicts.clear();
  for (const std::string &text : *all) {
    combined.ok &= text.front() == '1';
    StringRef rest = StringRef(text).drop_front();
    auto [value, messages] = rest.split('\n');
    double w = 0;
    if (!value.getAsDouble(w))
      combined.worstRelativeError = std::max(combined.worstRelativeError, w);
    combined.verdicts += messages.str();
  }
  return combined;
}
