//===- MixedPrecision.cpp - a forward pass computed in bf16 or f16 --------===//
//
// The body is retyped in place: every op of the dialect infers or keeps its
// result's element type from its operands, so turning the f32 values into
// bf16 ones keeps each op valid; only the ops that spell an element type in
// an attribute (a constant's value, a convert's dtype: an `ElementType`
// field of OpFieldsOpInterface) are rewritten, and generated indices (an
// iota's count: the `Generated` kernel class) are rounded from f32. The
// function is verified afterwards.
//
//===----------------------------------------------------------------------===//

#include "MixedPrecision.h"

#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/OpFields.h"
#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/ValueNames.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace shardc;

std::optional<shardc::detail::Precision> shardc::detail::parsePrecision(StringRef name) {
  if (name == "f32")
    return Precision::F32;
  if (name == "bf16-mixed")
    return Precision::BF16Mixed;
  if (name == "f16-mixed")
    return Precision::F16Mixed;
  return std::nullopt;
}

Type shardc::detail::getWorkingType(MLIRContext *ctx, Precision precision) {
  switch (precision) {
  case Precision::BF16Mixed:
    return BFloat16Type::get(ctx);
  case Precision::F16Mixed:
    return Float16Type::get(ctx);
  case Precision::F32:
    break;
  }
  return {};
}

static bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

static RankedTensorType withElementType(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

/// `value` converted to `element`, named `name` when given.
static Value convert(OpBuilder &b, Location loc, Value value, Type element,
                     StringRef name) {
  Location at = name.empty() ? loc : Location(NameLoc::get(
                                         b.getStringAttr(name), loc));
  return buildConvert(b, at, value, element);
}

/// Rewrites each attribute of `op` that spells the element type f32 (a
/// convert's dtype) to `half`; the caller retypes the results.
static void retargetElementTypeFields(Operation &op, Type half) {
  std::optional<OpFields> fields = getOpFields(op.getName());
  if (!fields)
    return;
  for (const OpField &field : fields->attrs) {
    if (field.kind != OpFieldKind::ElementType)
      continue;
    std::optional<Attribute> stored = op.getInherentAttr(field.name);
    auto type = stored ? dyn_cast_or_null<TypeAttr>(*stored) : TypeAttr();
    if (type && type.getValue().isF32())
      op.setInherentAttr(StringAttr::get(op.getContext(), field.name),
                         TypeAttr::get(half));
  }
}

LogicalResult shardc::detail::castBodyToHalf(func::FuncOp func, Type half) {
  Block &body = func.getBody().front();
  OpBuilder b(func.getContext());
  std::string suffix;
  llvm::raw_string_ostream(suffix) << "." << half;

  // Working copies of the f32 inputs, where the body starts.
  b.setInsertionPointToStart(&body);
  for (BlockArgument arg : body.getArguments()) {
    if (!isF32Tensor(arg.getType()) || arg.use_empty())
      continue;
    std::string name = getArgumentName(func, arg.getArgNumber()) + suffix;
    Value copy = convert(b, arg.getLoc(), arg, half, name);
    arg.replaceAllUsesExcept(copy, copy.getDefiningOp());
  }

  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (&op == ret.getOperation())
      break;
    if (getKernelClass(&op) == KernelClass::Generated) {
      if (!isF32Tensor(op.getResult(0).getType()))
        continue;
      // Positions past 256 are not bf16 values: count in f32, then round.
      b.setInsertionPointAfter(&op);
      Value counted = op.getResult(0);
      Value rounded = convert(b, op.getLoc(), counted, half, "");
      counted.replaceAllUsesExcept(rounded, rounded.getDefiningOp());
      continue;
    }
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      if (!isF32Tensor(constant.getType()))
        continue;
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense)
        return constant.emitError()
               << "mixed precision: cannot round constant "
               << constant.getValue() << " to " << half;
      auto type = withElementType(constant.getType(), half);
      const llvm::fltSemantics &semantics =
          cast<FloatType>(half).getFloatSemantics();
      SmallVector<APFloat> values;
      for (APFloat v : dense.getValues<APFloat>()) {
        bool losesInfo = false;
        v.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
        values.push_back(v);
      }
      constant.setValueAttr(
          cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
      constant.getResult().setType(type);
      continue;
    }
    // A working copy made above stays; a conversion to f32 (ids to
    // floats) now converts to `half`, and its result is retyped below.
    retargetElementTypeFields(op, half);
    for (OpResult result : op.getResults())
      if (isF32Tensor(result.getType()))
        result.setType(withElementType(result.getType(), half));
  }

  // The results go back to f32 under their names; the half values they
  // come from are `<name>.<half>`.
  b.setInsertionPoint(ret);
  for (OpOperand &operand : ret->getOpOperands()) {
    Value v = operand.get();
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getElementType() != half)
      continue;
    std::string name = getSourceName(v).str();
    if (Operation *def = v.getDefiningOp(); def && !name.empty())
      def->setLoc(NameLoc::get(b.getStringAttr(name + suffix), def->getLoc()));
    operand.set(convert(b, ret.getLoc(), v, b.getF32Type(), name));
  }
  return mlir::verify(func);
}
