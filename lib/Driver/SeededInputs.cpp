//===- SeededInputs.cpp - a model's inputs, given or seeded ---------------===//

#include "shardc/Driver/SeededInputs.h"

#include "shardc/Analysis/SeededParameters.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/RandomTensor.h"

using namespace mlir;
using namespace shardc;

llvm::Expected<Tensor> shardc::drawSeededInput(func::FuncOp func,
                                               unsigned index, uint64_t seed) {
  auto type = cast<RankedTensorType>(func.getArgument(index).getType());
  std::string name = getArgumentName(func, index);
  // Integer inputs get ids in [0, 16) (tryRandomTensor).
  llvm::Expected<Tensor> t = tryRandomTensor(
      type.getShape(), seed, name, defaultMaxTensorBytes(),
      executableDType(type.getElementType()).value_or(DType::F32));
  if (!t)
    return t.takeError();
  // Parameters are drawn as real models initialise them, so deep models
  // keep their scale (shardc/Analysis/SeededParameters.h).
  SeededInputScale scale = getSeededInputScale(func, index);
  if (t->dtype() == DType::F32 && (scale.scale != 1 || scale.offset != 0))
    for (float &v : t->values())
      v = scale.offset + scale.scale * v;
  return std::move(*t);
}

namespace {

/// Argument `i` of `func` when nobody gave it: an optimizer state's initial
/// value, or the seeded draw.
FailureOr<Tensor> defaultInput(func::FuncOp func, unsigned i,
                               std::optional<uint64_t> seed) {
  std::string name = getArgumentName(func, i);
  llvm::Expected<std::optional<Tensor>> state = initialOptimizerState(func, i);
  if (!state)
    return func.emitError()
           << "input '" << name << "': " << llvm::toString(state.takeError());
  if (*state)
    return std::move(**state);
  if (!seed)
    return func.emitError()
           << "input '" << name << "' has no value: give it, or a seed";
  llvm::Expected<Tensor> t = drawSeededInput(func, i, *seed);
  if (!t)
    return func.emitError()
           << "input '" << name << "': " << llvm::toString(t.takeError());
  return std::move(*t);
}

} // namespace

FailureOr<SmallVector<Tensor>>
shardc::bindInputs(func::FuncOp func,
                   const std::map<std::string, Tensor> &given,
                   std::optional<uint64_t> seed) {
  SmallVector<Tensor> args;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = getArgumentName(func, i);
    auto it = given.find(name);
    if (it == given.end()) {
      FailureOr<Tensor> t = defaultInput(func, i, seed);
      if (failed(t))
        return failure();
      args.push_back(std::move(*t));
      continue;
    }
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    if (it->second.getShape() != type.getShape())
      return func.emitError()
             << "input '" << name << "' has shape [" << it->second.getShape()
             << "] but the model expects [" << type.getShape() << "]";
    args.push_back(it->second.clone());
  }
  for (const auto &[name, tensor] : given)
    if (llvm::none_of(llvm::seq(0u, func.getNumArguments()), [&](unsigned i) {
          return getArgumentName(func, i) == name;
        }))
      return func.emitError()
             << "no input of the model is named '" << name << "'";
  return args;
}
