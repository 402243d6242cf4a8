//===- Kernels.cpp - dispatching a shardc op to its kernel ----------------===//
//
// The checks every op shares live here: supported op and dtype, operand
// tensors matching the operand types, the result fitting the byte budget.
// The op's kernel (a KernelOpInterface model attached by its family's
// kernel file) then only checks what is specific to it.
//
//===----------------------------------------------------------------------===//

#include "shardc/Interpreter/Kernels.h"

#include "KernelImpl.h"

#include "shardc/Support/HalfFloat.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Verifier.h"

#include <cstring>

using namespace mlir;
using namespace shardc;
using llvm::ArrayRef;

/// The static tensor type of `type` with an executable element type, or an
/// error naming `what`.
static FailureOr<RankedTensorType> checkExecutableTensor(Operation *op,
                                                         Type type,
                                                         StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return op->emitError() << "'" << op->getName() << "' " << what
                           << " has type " << type
                           << "; only statically shaped tensors can be "
                              "executed";
  if (!executableDType(tensor.getElementType()))
    return op->emitError() << "'" << op->getName() << "' " << what
                           << " has type " << type
                           << "; only f32, bf16, f16, i1, i32 and i64 are "
                              "executed ("
                           << tensor.getElementType()
                           << " is not supported yet)";
  return tensor;
}

DType shardc::detail::dtypeOf(Value value) {
  return computeDType(*executableDType(
      cast<RankedTensorType>(value.getType()).getElementType()));
}

void shardc::registerKernelModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, ShardcDialect *) {
    detail::attachElementwiseKernels(ctx);
    detail::attachContractionKernels(ctx);
    detail::attachReductionKernels(ctx);
    detail::attachLayoutKernels(ctx);
    detail::attachSliceKernels(ctx);
    detail::attachConstantKernel(ctx);
    detail::attachElementTypeKernels(ctx);
    detail::attachIndexingKernels(ctx);
  });
}

void shardc::registerKernelModels(MLIRContext &context) {
  DialectRegistry registry;
  registerKernelModels(registry);
  context.appendDialectRegistry(registry);
}

KernelOpInterface shardc::getKernel(Operation *op, bool reportMissing) {
  if (auto kernel = dyn_cast<KernelOpInterface>(op))
    return kernel;
  if (!reportMissing)
    return {};
  // Composites have no kernels by design: their primitives do.
  if (isa<DecomposableOpInterface>(op)) {
    op->emitError() << "'" << op->getName()
                    << "' is a composite op: expand it into primitive ops "
                       "(--shardc-decompose, first in every pipeline) "
                       "before running it";
    return {};
  }
  // The dialect promises a kernel to every tensor op: a promise still
  // unresolved means this context never got the interpreter's models.
  Dialect *dialect = op->getDialect();
  if (dialect && dialect->hasPromisedInterface(
                     op->getName().getTypeID(),
                     KernelOpInterface::getInterfaceID()))
    op->emitError() << "'" << op->getName()
                    << "' cannot run: the interpreter's kernels are not "
                       "registered in this context (call "
                       "shardc::registerKernelModels)";
  else
    op->emitError() << "'" << op->getName() << "' has no interpreter kernel";
  return {};
}

FailureOr<Tensor> shardc::evaluateTensorOp(Operation *op,
                                           ArrayRef<const Tensor *> operands,
                                           uint64_t maxTensorBytes,
                                           bool verifyOp, Tensor *inPlace) {
  if (!op)
    return failure();
  if (isa<CollectiveOpInterface>(op))
    return op->emitError() << "collective '" << op->getName()
                           << "' is not a local kernel; it runs through "
                              "the interpreter's communicator";
  if (isDeviceDependent(op))
    return op->emitError() << "'" << op->getName()
                           << "' is not a local kernel: it needs the device "
                              "it runs on (the interpreter's communicator)";
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
        checkExecutableTensor(op, value.getType(), what);
    if (failed(type))
      return failure();
    if (!tensor || tensor->shape() != type->getShape() ||
        tensor->dtype() != *executableDType(type->getElementType()))
      return op->emitError()
             << "'" << op->getName() << "' " << what << " is "
             << (tensor ? tensor->describe() : std::string("missing"))
             << " but the op expects " << *type;
  }
  FailureOr<RankedTensorType> resultType =
      checkExecutableTensor(op, op->getResult(0).getType(), "result");
  if (failed(resultType))
    return failure();
  KernelOpInterface kernel = getKernel(op, /*reportMissing=*/true);
  if (!kernel)
    return failure();
  // Half floats are computed in f32 (docs/precision.md): the kernel reads
  // its half operands widened, exactly, and its f32 result is rounded to
  // the result's type, to nearest even. Kernels never see a half tensor.
  SmallVector<Tensor> widened(operands.size());
  SmallVector<const Tensor *> computed(operands);
  for (auto [i, tensor] : llvm::enumerate(operands)) {
    if (!isHalfDType(tensor->dtype()))
      continue;
    llvm::Expected<Tensor> wide = widenToF32(*tensor, maxTensorBytes);
    if (!wide)
      return op->emitError() << "operand #" << i << " of '" << op->getName()
                             << "' as f32: "
                             << llvm::toString(wide.takeError());
    widened[i] = std::move(*wide);
    computed[i] = &widened[i];
  }
  // Every kernel but the reductions (which accumulate into zeros) writes
  // each element of its result, so those skip the zero fill.
  bool accumulates = kernel.accumulatesIntoZeros();
  DType stored = *executableDType(resultType->getElementType());
  DType dtype = computeDType(stored);
  // The operand the kernel updates in place serves as the result when it
  // is one of the operands as given (not a widened copy) and has the
  // result's type.
  int64_t updated = inPlace ? kernel.updatesOperandInPlace() : -1;
  if (updated >= 0 && updated < static_cast<int64_t>(computed.size()) &&
      computed[updated] == inPlace && stored == dtype &&
      inPlace->dtype() == dtype && inPlace->shape() == resultType->getShape()) {
    LogicalResult status =
        kernel.evaluateKernel(computed, *inPlace, maxTensorBytes);
    if (failed(status))
      return failure();
    return std::move(*inPlace);
  }
  llvm::Expected<Tensor> allocated =
      accumulates
          ? Tensor::allocate(resultType->getShape(), dtype, maxTensorBytes)
          : Tensor::allocateUninitialized(resultType->getShape(), dtype,
                                          maxTensorBytes);
  if (!allocated)
    return op->emitError() << "result of '" << op->getName()
                           << "': " << llvm::toString(allocated.takeError());
  Tensor result = std::move(*allocated);

  LogicalResult status = kernel.evaluateKernel(computed, result, maxTensorBytes);
  if (failed(status))
    return failure();
  if (stored == dtype)
    return result;
  llvm::Expected<Tensor> narrowed = narrowFromF32(result, stored, maxTensorBytes);
  if (!narrowed)
    return op->emitError() << "result of '" << op->getName() << "': "
                           << llvm::toString(narrowed.takeError());
  return std::move(*narrowed);
}
