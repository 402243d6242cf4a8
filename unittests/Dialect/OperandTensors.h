//===- OperandTensors.h - random inputs for an op's kernel ------*- C++ -*-===//
//
// The Dialect tests run the kernel of every op of Inputs/every-op.mlir on
// random operands; they draw them here, so that each draws the same values
// for the same seeds.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_UNITTESTS_DIALECT_OPERANDTENSORS_H
#define SHARDC_UNITTESTS_DIALECT_OPERANDTENSORS_H

#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Support/RandomTensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include <vector>

namespace shardc {

/// An input for operand `v`: f32 in [0.5, 1.5] (inside every op's domain —
/// log, sqrt, rsqrt, div — and away from the kinks of relu and step),
/// integers in [0, 16), booleans both ways.
inline Tensor operandTensor(mlir::Value v, uint64_t seed) {
  auto type = mlir::cast<mlir::RankedTensorType>(v.getType());
  std::optional<DType> dtype = executableDType(type.getElementType());
  Tensor t = llvm::cantFail(tryRandomTensor(type.getShape(), seed, "x",
                                            defaultMaxTensorBytes(),
                                            dtype.value_or(DType::F32)));
  if (t.dtype() == DType::F32)
    for (float &x : t.values())
      x = 1.0f + 0.5f * x;
  return t;
}

/// An operandTensor for each operand of `op`, the seeds counted on from
/// `seed`.
inline std::vector<Tensor> operandTensors(mlir::Operation *op, uint64_t &seed) {
  std::vector<Tensor> inputs;
  for (mlir::Value v : op->getOperands())
    inputs.push_back(operandTensor(v, seed++));
  return inputs;
}

/// `op`'s kernel on `inputs`.
inline mlir::FailureOr<Tensor>
evaluateOnTensors(mlir::Operation *op, const std::vector<Tensor> &inputs) {
  llvm::SmallVector<const Tensor *> operands;
  for (const Tensor &t : inputs)
    operands.push_back(&t);
  return evaluateTensorOp(op, operands);
}

} // namespace shardc

#endif // SHARDC_UNITTESTS_DIALECT_OPERANDTENSORS_H
