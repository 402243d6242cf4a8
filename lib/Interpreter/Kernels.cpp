//===- Kernels.cpp - dispatching a shardc op to its kernel ----------------===//
//
// The checks every op shares live here: supported op and dtype, operand
// tensors matching the operand types, the result fitting the byte budget.
// The kernel files then only check what is specific to their op.
//
//===----------------------------------------------------------------------===//

#include "shardc/Interpreter/Kernels.h"

#include "KernelImpl.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>

using namespace mlir;
using namespace shardc;
using llvm::ArrayRef;

/// The static f32 tensor type of `type`, or an error naming `what`.
static FailureOr<RankedTensorType> checkF32Tensor(Operation *op, Type type,
                                                  StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return op->emitError() << "'" << op->getName() << "' " << what
                           << " has type " << type
                           << "; only statically shaped tensors can be "
                              "executed";
  if (!tensor.getElementType().isF32())
    return op->emitError() << "'" << op->getName() << "' " << what
                           << " has type " << type << "; only f32 is "
                           << "executed (" << tensor.getElementType()
                           << " is not supported yet)";
  return tensor;
}

static LogicalResult evalConstant(ConstantOp op, Tensor &result) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "constant value of kind " << op.getValue()
                          << " is not supported; use a "
                          << "dense elements attribute";
  auto type = dyn_cast<RankedTensorType>(dense.getType());
  if (!type || type.getShape() != result.shape() ||
      !type.getElementType().isF32())
    return op.emitError() << "constant value of type " << dense.getType()
                          << " does not match the result " << result.describe();
  if (result.numElements() == 0)
    return success();
  if (dense.isSplat()) {
    std::fill_n(result.data(), result.numElements(),
                dense.getSplatValue<float>());
    return success();
  }
  // Raw data of a non-splat f32 attribute is the row-major element array.
  ArrayRef<char> raw = dense.getRawData();
  if (raw.size() != result.byteSize())
    return op.emitError("constant data size does not match its type");
  std::memcpy(result.data(), raw.data(), raw.size());
  return success();
}

static LogicalResult copyWithShape(Operation *op, const Tensor &input,
                                   Tensor &result) {
  if (input.numElements() != result.numElements())
    return op->emitError() << "'" << op->getName() << "' cannot turn "
                           << input.describe() << " into " << result.describe()
                           << ": element counts differ";
  if (result.numElements() > 0)
    std::memcpy(result.data(), input.data(), result.byteSize());
  return success();
}

FailureOr<Tensor> shardc::evaluateTensorOp(Operation *op,
                                           ArrayRef<const Tensor *> operands,
                                           uint64_t maxTensorBytes,
                                           bool verifyOp) {
  if (!op)
    return failure();
  if (isa<CollectiveOpInterface>(op))
    return op->emitError() << "collective '" << op->getName()
                           << "' is not a local kernel; it runs through "
                              "the interpreter's communicator";
  if (!isa_and_nonnull<ShardcDialect>(op->getDialect()) || isa<MeshOp>(op) ||
      op->getNumResults() != 1)
    return op->emitError() << "'" << op->getName()
                           << "' cannot be executed by the interpreter";
  // The ODS invariants (operand counts, attribute kinds, ...) are what the
  // dispatch below relies on; IR that skipped the verifier is checked here.
  if (verifyOp && failed(mlir::verify(op, /*verifyRecursively=*/false)))
    return failure();
  if (operands.size() != op->getNumOperands())
    return op->emitError() << "'" << op->getName() << "' expects "
                           << op->getNumOperands() << " operand tensors, got "
                           << operands.size();
  for (auto [i, value, tensor] : llvm::enumerate(op->getOperands(), operands)) {
    std::string what = "operand #" + std::to_string(i);
    FailureOr<RankedTensorType> type =
        checkF32Tensor(op, value.getType(), what);
    if (failed(type))
      return failure();
    if (!tensor || tensor->shape() != type->getShape() ||
        tensor->dtype() != DType::F32)
      return op->emitError()
             << "'" << op->getName() << "' " << what << " is "
             << (tensor ? tensor->describe() : std::string("missing"))
             << " but the op expects " << *type;
  }
  FailureOr<RankedTensorType> resultType =
      checkF32Tensor(op, op->getResult(0).getType(), "result");
  if (failed(resultType))
    return failure();
  // Every kernel but the reductions (which accumulate into zeros) writes
  // each element of its result, so those skip the zero fill.
  bool accumulates = isa<ReduceSumOp, ReduceMaxOp>(op);
  llvm::Expected<Tensor> allocated =
      accumulates
          ? Tensor::allocate(resultType->getShape(), DType::F32, maxTensorBytes)
          : Tensor::allocateUninitialized(resultType->getShape(), DType::F32,
                                          maxTensorBytes);
  if (!allocated)
    return op->emitError() << "result of '" << op->getName()
                           << "': " << llvm::toString(allocated.takeError());
  Tensor result = std::move(*allocated);

  auto in = [&](unsigned i) -> const Tensor & { return *operands[i]; };
  LogicalResult status =
      llvm::TypeSwitch<Operation *, LogicalResult>(op)
          .Case<ReluOp, GeluOp, ExpOp, LogOp, NegOp, TanhOp, SqrtOp, RsqrtOp,
                SigmoidOp, StepOp>([&](Operation *unary) {
            return shardc::detail::evalUnary(unary, in(0), result);
          })
          .Case<AddOp, SubOp, MulOp, DivOp, MaxOp>([&](Operation *binary) {
            return shardc::detail::evalBinary(binary, in(0), in(1), result);
          })
          .Case([&](MatmulOp m) {
            return shardc::detail::evalMatmul(m, in(0), in(1), result);
          })
          .Case([&](DotGeneralOp d) {
            return shardc::detail::evalDotGeneral(d, in(0), in(1), result,
                                                  maxTensorBytes);
          })
          .Case([&](ReduceSumOp r) {
            return shardc::detail::evalReduce(r, r.getDims(), /*isMax=*/false,
                                              in(0), result);
          })
          .Case([&](ReduceMaxOp r) {
            return shardc::detail::evalReduce(r, r.getDims(), /*isMax=*/true,
                                              in(0), result);
          })
          .Case([&](TransposeOp t) {
            return shardc::detail::evalTranspose(t, in(0), result);
          })
          .Case([&](BroadcastInDimOp b) {
            return shardc::detail::evalBroadcastInDim(b, in(0), result);
          })
          .Case([&](ReshapeOp r) { return copyWithShape(r, in(0), result); })
          .Case([&](ShardingConstraintOp c) -> LogicalResult {
            if (in(0).shape() != result.shape())
              return c.emitError()
                     << "sharding_constraint operand " << in(0).describe()
                     << " differs from its result " << result.describe();
            return copyWithShape(c, in(0), result);
          })
          .Case([&](ConstantOp c) { return evalConstant(c, result); })
          .Default([&](Operation *other) {
            return other->emitError()
                   << "'" << other->getName() << "' has no interpreter kernel";
          });
  if (failed(status))
    return failure();
  return result;
}
