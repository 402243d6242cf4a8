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
                             const PipelineTrainingOptions &options) {
  // The optimizer rewrites the function in place: the original's argument
  // names are read first.
  std::vector<std::string> argNames;
  func::FuncOp original = getEntryFunction(reference);
  for (unsigned i = 0; i < original.getNumArguments(); ++i)
    argNames.push_back(getArgumentName(original, i));
  PassManager pm(reference.getContext(), ModuleOp::getOperationName());
  ShardcOptimizerOptions optimizer;
  optimizer.optimizer = options.pipeline.optimizer.optimizer;
  pm.addPass(createShardcOptimizer(optimizer));
  if (failed(pm.run(reference)))
    return failure();
  func::FuncOp step = getEntryFunction(reference);
  FailureOr<std::vector<Tensor>> args =
      firstStepArguments(step, inputs, options.learningRate);
  if (failed(args))
    return failure();
  std::vector<Tensor> results;
  for (int64_t s = 0; s < options.steps; ++s) {
    FailureOr<SmallVector<Tensor>> out = interpretFunction(step, *args);
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

/// The tolerance of each parameter: the given one, raised for a parameter
/// the steps make sensitive to rounding to kSensitivityMargin times how far
/// the reference moves when its inputs change by one ulp. That takes one
/// more reference run, made on the first parameter that needs it.
class ToleranceOf {
public:
  ToleranceOf(PipelineTrainingPlan &plan, const PipelineReference &reference,
              ArrayRef<Tensor> inputs, const PipelineTrainingOptions &options,
              double scale)
      : plan(plan), reference(reference), inputs(inputs), options(options),
        scale(scale) {}

  FailureOr<double> operator()(int64_t param) {
    double tolerance = options.tolerance;
    // Only Adam amplifies rounding (shardc::hasAdaptiveOptimizerState).
    if (param < 0 || !(tolerance > 0) ||
        options.pipeline.optimizer.optimizer != "adam")
      return tolerance;
    if (!measured && failed(measure()))
      return failure();
    return raised.lookup(param);
  }

private:
  LogicalResult measure() {
    SmallVector<Tensor> perturbed;
    for (const Tensor &t : inputs)
      perturbed.push_back(perturbByOneUlp(t));
    FailureOr<PipelineReference> moved =
        runPipelineReference(*plan.perturbedModule, perturbed, options);
    if (failed(moved))
      return failure();
    measured = true;
    for (const auto &[p, want] : reference.next) {
      double sensitivity =
          compareToReference(moved->next.find(p)->second, want, nullptr, scale)
              .first;
      raised[p] =
          std::isfinite(sensitivity)
              ? std::max(options.tolerance, kSensitivityMargin * sensitivity)
              : options.tolerance;
    }
    return success();
  }

  PipelineTrainingPlan &plan;
  const PipelineReference &reference;
  ArrayRef<Tensor> inputs;
  const PipelineTrainingOptions &options;
  double scale;
  bool measured = false;
  llvm::DenseMap<int64_t, double> raised;
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
      FailureOr<double> allowed = toleranceOf(param);
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
