//===- PipelineMicrobatch.cpp - the loss function at micro-batch size -----===//

#include "PipelineMicrobatch.h"

#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/TensorOpQueries.h"
#include "shardc/Dialect/ValueNames.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace shardc;

DenseSet<Value> shardc::findArgumentFreeValues(func::FuncOp fn) {
  DenseSet<Value> free;
  for (Operation &op : fn.getBody().front().without_terminator())
    if (llvm::all_of(op.getOperands(),
                     [&](Value v) { return free.contains(v); }))
      for (Value r : op.getResults())
        free.insert(r);
  return free;
}

/// Whether `op` computes element by element from operands of its result's
/// shape, so that fewer rows of the result need fewer rows of each operand.
static bool isElementwise(Operation *op) {
  return op->hasTrait<mlir::OpTrait::SameOperandsAndResultType>() ||
         isa<SelectOp, CompareOp>(op);
}

namespace {

/// Rebuilds values that do not follow the batch with fewer rows (dim 0).
class RowResizer {
public:
  RowResizer(DenseMap<Operation *, int64_t> &stageOf) : stageOf(stageOf) {}

  /// `v` with `rows` rows, built after its definition; failure when it
  /// varies along dim 0 or is not built from what can be resized.
  FailureOr<Value> resize(Value v, int64_t rows);

private:
  DenseMap<Operation *, int64_t> &stageOf;
  DenseMap<std::pair<Value, int64_t>, Value> done;
};

} // namespace

FailureOr<Value> RowResizer::resize(Value v, int64_t rows) {
  if (Value known = done.lookup({v, rows}))
    return known;
  Operation *def = v.getDefiningOp();
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!def || !type || type.getRank() == 0)
    return failure();
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = rows;
  RankedTensorType newType = type.clone(shape);
  OpBuilder b(def->getContext());
  b.setInsertionPointAfter(def);
  Operation *made = nullptr;
  if (auto constant = dyn_cast<ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.isSplat())
      return failure();
    made = ConstantOp::create(b, def->getLoc(),
                              cast<ElementsAttr>(dense.resizeSplat(newType)));
  } else if (std::optional<int64_t> counted = getCountedDim(def)) {
    // Indices along another dim are the same in every row, and the op
    // counts for any number of rows its result type asks for.
    if (*counted == 0)
      return failure();
    made = b.clone(*def);
  } else if (std::optional<ArrayRef<int64_t>> dims = getBroadcastDims(def)) {
    // A broadcast is the same in every row when no operand dim is dim 0,
    // and repeats its operand as many times as its result type asks.
    if (llvm::is_contained(*dims, 0))
      return failure();
    made = b.clone(*def);
  } else if (def->getNumOperands() > 0 && isElementwise(def) &&
             llvm::all_of(def->getOperands(), [&](Value o) {
               auto t = dyn_cast<RankedTensorType>(o.getType());
               return t && t.getShape() == type.getShape();
             })) {
    // Elementwise (compare, select, arithmetic) of values shaped like it.
    IRMapping map;
    for (Value o : def->getOperands()) {
      FailureOr<Value> r = resize(o, rows);
      if (failed(r))
        return failure();
      map.map(o, *r);
    }
    made = b.clone(*def, map);
  } else {
    return failure();
  }
  made->getResult(0).setType(newType);
  stageOf[made] = stageOf.lookup(def);
  done[{v, rows}] = made->getResult(0);
  return made->getResult(0);
}

/// The result type of broadcast `op` (its operand's dim i at result dim
/// `dims[i]`) once its operand has its new type (`oldOperand` before): each
/// result dim an operand dim filled (not expanded from size 1) follows that
/// dim.
static RankedTensorType broadcastResultType(Operation *op,
                                            ArrayRef<int64_t> dims,
                                            RankedTensorType oldOperand) {
  auto result = cast<RankedTensorType>(op->getResult(0).getType());
  auto operand = cast<RankedTensorType>(op->getOperand(0).getType());
  SmallVector<int64_t> shape(result.getShape());
  for (auto [i, d] : llvm::enumerate(dims))
    if (oldOperand.getDimSize(i) == result.getDimSize(d))
      shape[d] = operand.getDimSize(i);
  return result.clone(shape);
}

FailureOr<func::FuncOp> shardc::cloneAtMicrobatchSize(
    func::FuncOp func, int64_t m, const DenseSet<unsigned> &isParam,
    ArrayRef<int64_t> opStages, DenseMap<Operation *, int64_t> &stageOf) {
  func::FuncOp micro = func.clone();
  micro.setSymName((func.getSymName() + ".microbatch").str());
  OpBuilder builder(func.getContext());
  builder.setInsertionPointAfter(func);
  builder.insert(micro);
  Block &body = micro.getBody().front();
  DenseSet<Value> changed, argumentFree;
  // The type each changed value had at the batch's size.
  DenseMap<Value, Type> batchType;
  for (BlockArgument arg : body.getArguments()) {
    if (isParam.contains(arg.getArgNumber()))
      continue;
    auto type = cast<RankedTensorType>(arg.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[0] /= m;
    batchType[arg] = type;
    arg.setType(type.clone(shape));
    changed.insert(arg);
  }
  RowResizer resizer(stageOf);
  auto fail = [&]() -> FailureOr<func::FuncOp> {
    micro.erase();
    return failure();
  };
  // Ops inserted by the resizer sit after their originals, before `op`:
  // the iteration below visits only the original ops.
  SmallVector<Operation *> original;
  for (Operation &op : body.without_terminator())
    original.push_back(&op);
  for (auto [i, op] : llvm::enumerate(original)) {
    stageOf[op] = opStages[i];
    if (llvm::all_of(op->getOperands(),
                     [&](Value v) { return argumentFree.contains(v); })) {
      argumentFree.insert(op->getResult(0));
      continue;
    }
    if (llvm::none_of(op->getOperands(),
                      [&](Value v) { return changed.contains(v); }))
      continue;
    // An operand that does not follow the batch (built from constants or
    // parameters) but has the batch's rows, next to a micro-batch operand
    // of the same rank, takes the micro-batch's rows.
    for (OpOperand &use : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(use.get().getType());
      if (!isElementwise(op) || changed.contains(use.get()) || !type ||
          type.getRank() == 0)
        continue;
      for (Value other : op->getOperands()) {
        auto otherType = dyn_cast<RankedTensorType>(other.getType());
        if (!changed.contains(other) || !otherType ||
            otherType.getRank() != type.getRank() ||
            otherType.getDimSize(0) * m != type.getDimSize(0))
          continue;
        FailureOr<Value> r =
            resizer.resize(use.get(), otherType.getDimSize(0));
        if (failed(r)) {
          op->emitError() << "cannot split the batch into " << m
                          << " micro-batches: "
                          << describeValue(use.get())
                          << " does not follow the batch inputs but has the "
                             "batch's "
                          << type.getDimSize(0)
                          << " rows, and varies along them";
          return fail();
        }
        use.set(*r);
        break;
      }
    }
    SmallVector<Type> types;
    if (std::optional<ArrayRef<int64_t>> dims = getBroadcastDims(op)) {
      types.push_back(broadcastResultType(
          op, *dims,
          cast<RankedTensorType>(batchType.lookup(op->getOperand(0)))));
    } else if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
      if (failed(infer.inferReturnTypes(
              op->getContext(), op->getLoc(), op->getOperands(),
              op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
              op->getRegions(), types))) {
        op->emitError() << "cannot split the batch into micro-batches "
                           "through this op";
        return fail();
      }
    } else if (op->hasTrait<mlir::OpTrait::SameOperandsAndResultType>()) {
      types.push_back(op->getOperand(0).getType());
    } else {
      op->emitError() << "cannot split the batch into micro-batches through '"
                      << op->getName()
                      << "': its result type does not follow from its "
                         "operands";
      return fail();
    }
    for (auto [result, type] : llvm::zip(op->getResults(), types)) {
      batchType[result] = result.getType();
      result.setType(type);
      changed.insert(result);
    }
  }
  micro.setFunctionType(FunctionType::get(
      micro.getContext(), body.getArgumentTypes(),
      body.getTerminator()->getOperandTypes()));
  if (failed(mlir::verify(micro))) {
    func.emitError() << "cannot split the batch of @" << func.getSymName()
                     << " into " << m << " micro-batches";
    return fail();
  }
  return micro;
}
