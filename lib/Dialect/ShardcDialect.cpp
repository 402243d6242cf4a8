//===- ShardcDialect.cpp - dialect registration and attribute hooks -------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/CollectiveOpInterface.h"
#include "shardc/Dialect/RecomputedAttr.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/UnevenDims.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace shardc;

#include "shardc/Dialect/ShardcDialect.cpp.inc"

/// Calls `fn` with a null `Ops *` for every op class.
template <typename... Ops, typename Fn> static void forEachOpClass(Fn &&fn) {
  (fn(static_cast<Ops *>(nullptr)), ...);
}

void ShardcDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "shardc/Dialect/ShardcOps.cpp.inc"
      >();
  // Every tensor op has a kernel, attached by the interpreter
  // (shardc::registerKernelModels); the promise lets a context without them
  // say so instead of finding no kernel.
  forEachOpClass<
#define GET_OP_LIST
#include "shardc/Dialect/ShardcOps.cpp.inc"
#include "shardc/Dialect/ValueNames.h"
      >([this](auto *tag) {
    using OpT = std::remove_pointer_t<decltype(tag)>;
    if constexpr (OpT::template hasTrait<shardc::OpTrait::TensorOp>())
      declarePromisedInterface<KernelOpInterface, OpT>();
  });
}

/// `valueName` is only called for a message: verification runs on every
/// sharded value, and naming one builds a string.
static LogicalResult verifyShardingOn(Operation *anchor, NamedAttribute attr,
                                      Type type,
                                      function_ref<std::string()> valueName) {
  auto sharding = dyn_cast<ShardingAttr>(attr.getValue());
  if (!sharding)
    return anchor->emitOpError()
           << "'shardc.sharding' must be a #shardc.sharding, got "
           << attr.getValue();
  MeshOp mesh = lookupMesh(anchor, sharding.getMesh());
  if (!mesh)
    return anchor->emitOpError()
           << "sharding of " << valueName() << " names unknown mesh "
           << sharding.getMesh();
  return verifyShardingForType(sharding, mesh, type, valueName,
                               [&] { return anchor->emitOpError(); });
}

LogicalResult ShardcDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == getBuffersAttrName()) {
    auto names = dyn_cast<ArrayAttr>(attr.getValue());
    if (!names || !isa<ModuleOp>(op) ||
        !llvm::all_of(names, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitOpError("'shardc.buffers' is an array of strings (the "
                             "names of buffers) on a module");
    return success();
  }
  if (name == getSpmdAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<func::FuncOp>(op))
      return op->emitOpError("'shardc.spmd' is a unit attribute of func.func");
    return success();
  }
  if (name == getStageAttrName()) {
    auto stage = dyn_cast<IntegerAttr>(attr.getValue());
    if (!stage || stage.getValue().isNegative())
      return op->emitOpError(
          "'shardc.stage' is a non-negative integer (a pipeline stage)");
    return success();
  }
  if (name == getPipelineActionAttrName()) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitOpError("'shardc.pipeline_action' is a string such as "
                             "\"F0\" or \"B0\"");
    return success();
  }
  if (name == getReshardForAttrName()) {
    if (!isa<DictionaryAttr>(attr.getValue()) ||
        !isa<CollectiveOpInterface>(op))
      return op->emitOpError("'shardc.reshard_for' is a dictionary on a "
                             "collective (the record of its reshard)");
    return success();
  }
  if (name == kRecomputedAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError("'shardc.recomputed' is a unit attribute (a "
                             "forward op copied into the backward pass)");
    return success();
  }
  if (name != getShardingAttrName())
    return op->emitOpError() << "unknown shardc attribute '" << name << "'";
  if (op->getNumResults() != 1)
    return op->emitOpError()
           << "'shardc.sharding' needs an operation with exactly one result";
  return verifyShardingOn(op, attr, op->getResult(0).getType(),
                          [&] { return describeValue(op->getResult(0)); });
}

LogicalResult ShardcDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  if (attr.getName().getValue() == getNameAttrName()) {
    auto name = dyn_cast<StringAttr>(attr.getValue());
    if (!name || name.getValue().empty())
      return op->emitOpError("'shardc.name' must be a non-empty string");
    return success();
  }
  if (attr.getName().getValue() == getParamAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError("'shardc.param' is a unit attribute");
    return success();
  }
  if (attr.getName().getValue() == getCheckpointShapeAttrName()) {
    // Its element count is the global argument's, which a partitioned
    // function no longer shows: readers check it against what they load.
    auto shape = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    if (!shape ||
        llvm::any_of(shape.asArrayRef(), [](int64_t d) { return d < 0; }))
      return op->emitOpError("'shardc.checkpoint_shape' must be an array<i64> "
                             "of sizes >= 0");
    return success();
  }
  if (attr.getName().getValue() == getOptimizerStateAttrName()) {
    if (!isa<FloatAttr>(attr.getValue()))
      return op->emitOpError("'shardc.optimizer_state' is a float attribute "
                             "(the state's initial value)");
    return success();
  }
  if (attr.getName().getValue() != getShardingAttrName())
    return op->emitOpError()
           << "unknown shardc argument attribute '" << attr.getName() << "'";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func || func.isExternal() || regionIndex != 0)
    return op->emitOpError("'shardc.sharding' on an argument needs a function "
                           "with a body");
  // The attributes are verified before the function's own check that its
  // entry block has an argument per input: a malformed function may not.
  Region &body = func.getFunctionBody();
  if (body.empty() || argIndex >= body.front().getNumArguments())
    return op->emitOpError() << "'shardc.sharding' on argument #" << argIndex
                             << ", which the function's entry block lacks";
  BlockArgument arg = func.getArgument(argIndex);
  return verifyShardingOn(op, attr, arg.getType(),
                          [&] { return describeValue(arg); });
}

LogicalResult ShardcDialect::verifyRegionResultAttribute(Operation *op,
                                                         unsigned regionIndex,
                                                         unsigned resultIndex,
                                                         NamedAttribute attr) {
  if (attr.getName().getValue() == getGradientOfAttrName() ||
      attr.getName().getValue() == getNextAttrName()) {
    auto name = dyn_cast<StringAttr>(attr.getValue());
    if (!name || name.getValue().empty())
      return op->emitOpError()
             << "'" << attr.getName().getValue()
             << "' must be a non-empty string (an argument's name)";
    return success();
  }
  if (attr.getName().getValue() == shardc::getGlobalShapeAttrName()) {
    auto shape = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    auto func = dyn_cast<FunctionOpInterface>(op);
    auto type =
        func && resultIndex < func.getResultTypes().size()
            ? dyn_cast<RankedTensorType>(func.getResultTypes()[resultIndex])
            : RankedTensorType();
    if (!shape || !type || shape.size() != type.getRank() ||
        llvm::any_of(shape.asArrayRef(), [](int64_t d) { return d < 0; }))
      return op->emitOpError()
             << "'" << attr.getName().getValue()
             << "' must be an array<i64> of one size >= 0 per dim of the "
                "result";
    return success();
  }
  if (attr.getName().getValue() != getShardingAttrName())
    return op->emitOpError()
           << "unknown shardc result attribute '" << attr.getName() << "'";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func || resultIndex >= func.getResultTypes().size())
    return op->emitOpError("'shardc.sharding' on a result needs a function");
  return verifyShardingOn(op, attr, func.getResultTypes()[resultIndex], [&] {
    return "result #" + std::to_string(resultIndex);
  });
}
