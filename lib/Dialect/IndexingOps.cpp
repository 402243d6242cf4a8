//===- IndexingOps.cpp - gather and scatter_add ---------------------------===//
//
// Type inference, sharding rules, local computations, gradient rules and
// cost of the ops that index a table with integer ids: gather (NumPy's
// take) and its transpose scatter_add, each the other's gradient.
//
// The table's gathered `axis` is the interesting factor. gather sums it
// away in the rule's terms (a reduction factor): with the table's rows
// split over some mesh axes, each device looks up only the ids in its rows,
// gets zeros for the others, and the devices' results add up to the whole
// lookup (Megatron's VocabParallelEmbedding: one all_reduce). scatter_add
// keeps it (a parallel factor): each device adds only the updates whose ids
// fall in its rows, and nothing moves. Both shift the ids by the device's
// row offset, computed from `axis_index` in their local computation.
//
//===----------------------------------------------------------------------===//

#include "TensorOpHelpers.h"

#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/IndexingShapes.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

SmallVector<int64_t> shardc::takeShape(ArrayRef<int64_t> table,
                                       ArrayRef<int64_t> ids, int64_t axis) {
  SmallVector<int64_t> shape(table.begin(), table.begin() + axis);
  shape.append(ids.begin(), ids.end());
  shape.append(table.begin() + axis + 1, table.end());
  return shape;
}

//===----------------------------------------------------------------------===//
// Type inference (the verifiers: every constraint is checked here)
//===----------------------------------------------------------------------===//

/// Checks what gather and scatter_add share: integer ids, `axis` in range
/// of the table, a known `mode`.
static LogicalResult checkIndexing(std::optional<Location> loc, StringRef op,
                                   RankedTensorType table, RankedTensorType ids,
                                   int64_t axis, StringRef mode) {
  if (!table || !ids)
    return failInference(loc, op + " operands must be ranked tensors");
  Type idType = ids.getElementType();
  if (!(idType.isSignlessInteger(32) || idType.isSignlessInteger(64))) {
    std::string name;
    llvm::raw_string_ostream os(name);
    os << idType;
    return failInference(loc, op + " ids must be i32 or i64, not " + name);
  }
  if (axis < 0 || axis >= table.getRank())
    return failInference(loc, op + " axis " + Twine(axis) +
                                  " is out of range for a table of rank " +
                                  Twine(table.getRank()));
  if (mode != "error" && mode != "skip")
    return failInference(loc, op + " mode must be \"error\" or \"skip\", not "
                                   "\"" + mode + "\"");
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto table = asTensor(adaptor.getTable()), ids = asTensor(adaptor.getIds());
  if (failed(checkIndexing(loc, "gather", table, ids, adaptor.getAxis(),
                           adaptor.getMode())))
    return failure();
  types.push_back(RankedTensorType::get(
      takeShape(table.getShape(), ids.getShape(), adaptor.getAxis()),
      table.getElementType()));
  return success();
}

LogicalResult ScatterAddOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  auto table = asTensor(adaptor.getTable()), ids = asTensor(adaptor.getIds());
  auto updates = asTensor(adaptor.getUpdates());
  if (failed(checkIndexing(loc, "scatter_add", table, ids, adaptor.getAxis(),
                           adaptor.getMode())))
    return failure();
  if (!updates || updates.getElementType() != table.getElementType())
    return failInference(loc, "scatter_add updates must have the table's "
                              "element type");
  SmallVector<int64_t> expected =
      takeShape(table.getShape(), ids.getShape(), adaptor.getAxis());
  if (updates.getShape() != ArrayRef<int64_t>(expected)) {
    std::string want, got;
    llvm::raw_string_ostream w(want), g(got);
    llvm::interleave(expected, w, "x");
    llvm::interleave(updates.getShape(), g, "x");
    return failInference(loc, "scatter_add updates have shape [" + got +
                                  "] but gather(table, ids, axis) has [" +
                                  want + "]");
  }
  types.push_back(table);
  return success();
}

//===----------------------------------------------------------------------===//
// Sharding rules
//===----------------------------------------------------------------------===//

namespace {
/// The factors of an indexing op: one per table dim (the gathered `axis` of
/// kind `axisKind`), then one per ids dim, of kind `idsKind`. Factor
/// `axis` is the gathered dim in every rule below (the cost relies on it).
struct IndexingFactors {
  TensorFactors table, ids, taken;
};

IndexingFactors indexingFactors(ShardingRule &rule, ArrayRef<int64_t> table,
                                ArrayRef<int64_t> ids, int64_t axis,
                                FactorKind axisKind, FactorKind idsKind) {
  IndexingFactors f;
  for (auto [d, size] : llvm::enumerate(table))
    f.table.push_back({rule.addFactor(
        size, static_cast<int64_t>(d) == axis ? axisKind : FactorKind::Parallel)});
  f.ids = freshFactors(rule, ids, idsKind);
  // The taken shape: table[:axis] + ids + table[axis+1:].
  f.taken.append(f.table.begin(), f.table.begin() + axis);
  f.taken.append(f.ids.begin(), f.ids.end());
  f.taken.append(f.table.begin() + axis + 1, f.table.end());
  return f;
}
} // namespace

// The gathered axis is summed away: a device holding a block of the table's
// rows contributes the lookups of its ids and zeros elsewhere. A boolean
// table cannot be summed, so there it needs replication.
ShardingRule GatherOp::getShardingRule() {
  ShardingRule rule;
  bool summable = !getTable().getType().getElementType().isSignlessInteger(1);
  IndexingFactors f = indexingFactors(
      rule, shapeOf(getTable()), shapeOf(getIds()), getAxis(),
      summable ? FactorKind::Reduction : FactorKind::NeedReplication,
      FactorKind::Parallel);
  rule.addOperand(f.table);
  rule.addOperand(f.ids);
  rule.addResult(f.taken);
  return rule;
}

// Padding of the ids (an uneven dim of them) is looked up like any id; in
// mode "error" it must name a row, so it becomes 0. The table's padding
// follows its factors (zero on the summed-away axis: a lookup past the
// table's end in mode "skip" gives zeros, as unsharded).
PaddingFill GatherOp::getPaddingFill(unsigned operand, const ShardingRule &rule,
                                     int64_t factor) {
  if (operand == 1 && getMode() == "error")
    return PaddingFill::Zero;
  return getDefaultPaddingFill(rule.getFactor(factor).kind);
}

// The table's dims, gathered axis included, pass through to the result;
// the ids' dims are summed away (the updates of every id land in one
// table).
ShardingRule ScatterAddOp::getShardingRule() {
  ShardingRule rule;
  IndexingFactors f =
      indexingFactors(rule, shapeOf(getTable()), shapeOf(getIds()), getAxis(),
                      FactorKind::Parallel, FactorKind::Reduction);
  rule.addOperand(f.table);
  rule.addOperand(f.ids);
  rule.addOperand(f.taken);
  rule.addResult(f.table);
  return rule;
}

//===----------------------------------------------------------------------===//
// Local computations
//===----------------------------------------------------------------------===//

Location shardc::detail::helperLoc(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getChildLoc();
  return loc;
}

static Value buildI64Scalar(OpBuilder &b, Location loc, int64_t value) {
  auto type = RankedTensorType::get({}, b.getI64Type());
  return buildConstant(
      b, loc, cast<ElementsAttr>(DenseElementsAttr::get(
                  type, b.getIntegerAttr(b.getI64Type(), value))));
}

Value shardc::detail::buildBlockOffset(OpBuilder &b, Location loc,
                                      FlatSymbolRefAttr mesh,
                                      ArrayRef<StringRef> axes,
                                      int64_t blockSize, Type element) {
  SmallVector<Attribute> names;
  for (StringRef a : axes)
    names.push_back(b.getStringAttr(a));
  auto i64Scalar = RankedTensorType::get({}, b.getI64Type());
  Value index =
      AxisIndexOp::create(b, loc, i64Scalar, mesh, b.getArrayAttr(names));
  Value offset = blockSize == 1
                     ? index
                     : buildMul(b, loc, index, buildI64Scalar(b, loc, blockSize));
  if (element != b.getI64Type())
    offset = buildConvert(b, loc, offset, element);
  return offset;
}

/// `ids` minus this device's first row along `axes` (blocks of
/// `rowsPerDevice`): the ids in its block become local row numbers, the
/// others fall outside [0, rowsPerDevice).
static Value buildLocalIds(OpBuilder &b, Location loc, FlatSymbolRefAttr mesh,
                           ArrayRef<StringRef> axes, int64_t rowsPerDevice,
                           Value ids) {
  auto idsType = cast<RankedTensorType>(ids.getType());
  Value offset = buildBlockOffset(b, loc, mesh, axes, rowsPerDevice,
                                  idsType.getElementType());
  return buildSub(b, loc, ids,
                  buildBroadcastInDim(b, loc, idsType, offset, {}));
}

LogicalResult GatherOp::buildLocalComputation(
    OpBuilder &b, ValueRange locals, TypeRange localTypes,
    const FactorLayout &layout, SmallVectorImpl<Value> &results) {
  int64_t axis = getAxis();
  ArrayRef<StringRef> rowAxes = layout.factorAxes[axis];
  if (rowAxes.empty())
    return buildClonedLocalComputation(*this, b, locals, localTypes, results);
  // Each device looks up the ids in its rows and gets zeros for the rest:
  // its result is its share of a sum over `rowAxes`.
  Location loc = helperLoc(getLoc());
  Value ids = buildLocalIds(b, loc, layout.mesh, rowAxes,
                            shapeOf(locals[0])[axis], locals[1]);
  results.push_back(GatherOp::create(b, getLoc(), localTypes[0], locals[0],
                                     ids, axis, "skip"));
  return success();
}

LogicalResult ScatterAddOp::buildLocalComputation(
    OpBuilder &b, ValueRange locals, TypeRange localTypes,
    const FactorLayout &layout, SmallVectorImpl<Value> &results) {
  int64_t axis = getAxis(), tableRank = rankOf(getTable());
  ArrayRef<StringRef> rowAxes = layout.factorAxes[axis];
  SmallVector<StringRef> idAxes;
  for (int64_t f = tableRank; f < static_cast<int64_t>(layout.factorAxes.size());
       ++f)
    llvm::append_range(idAxes, layout.factorAxes[f]);
  if (rowAxes.empty() && idAxes.empty())
    return buildClonedLocalComputation(*this, b, locals, localTypes, results);

  Location loc = helperLoc(getLoc());
  Value table = locals[0], ids = locals[1];
  // With the ids split over `idAxes`, every device's result is a share of a
  // sum over them: the table must enter it once, on the devices of index 0
  // (a table of zeros, autodiff's, enters nowhere and needs no select).
  Attribute splat = getSplatConstantValue(getTable());
  bool zeroTable = splat && isa<FloatAttr>(splat) &&
                   cast<FloatAttr>(splat).getValue().isZero();
  if (!idAxes.empty() && !zeroTable) {
    auto tableType = cast<RankedTensorType>(table.getType());
    Value first = buildBlockOffset(b, loc, layout.mesh, idAxes, 1,
                                   b.getI64Type());
    Value isFirst =
        buildCompare(b, loc, first, buildI64Scalar(b, loc, 0), "EQ");
    Value pred = buildBroadcastInDim(
        b, loc, RankedTensorType::get(tableType.getShape(), b.getI1Type()),
        isFirst, {});
    table = buildSelect(b, loc, pred, table,
                        buildSplatConstant(b, loc, tableType, 0.0));
  }
  StringRef mode = getMode();
  // With the rows split, each device adds the updates of the ids in its
  // rows and drops the others.
  if (!rowAxes.empty()) {
    ids = buildLocalIds(b, loc, layout.mesh, rowAxes, shapeOf(table)[axis],
                        ids);
    mode = "skip";
  }
  results.push_back(ScatterAddOp::create(b, getLoc(), localTypes[0], table,
                                         ids, locals[2], axis, mode));
  return success();
}

//===----------------------------------------------------------------------===//
// Gradient rules
//===----------------------------------------------------------------------===//

static bool isFloatTensor(Value v) {
  return isa<FloatType>(cast<ShapedType>(v.getType()).getElementType());
}

LogicalResult GatherOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                               Value g, ArrayRef<bool> wanted,
                                               SmallVectorImpl<Value> &out) {
  // Each looked-up row's cotangent adds back into the row it came from;
  // the ids (integers) get none.
  clearCotangents(*this, out);
  if (!want(wanted, 0) || !isFloatTensor(getTable()))
    return success();
  Value zeros = buildSplatConstant(b, loc, getTable().getType(), 0.0);
  out[0] = ScatterAddOp::create(b, loc, getTable().getType(), zeros, getIds(),
                                g, getAxis(), getMode());
  return success();
}

LogicalResult ScatterAddOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                   Value g,
                                                   ArrayRef<bool> wanted,
                                                   SmallVectorImpl<Value> &out) {
  // The table passes through; each update reaches the result at its id, so
  // its cotangent is g gathered there (zero for a skipped id).
  clearCotangents(*this, out);
  if (want(wanted, 0))
    out[0] = g;
  if (want(wanted, 2))
    out[2] = GatherOp::create(b, loc, getUpdates().getType(), g, getIds(),
                              getAxis(), getMode());
  return success();
}

//===----------------------------------------------------------------------===//
// Cost: gather moves elements (no arithmetic); scatter_add adds one
// element per update element (every factor but the gathered axis)
//===----------------------------------------------------------------------===//

double GatherOp::getFlops(ArrayRef<double>) { return 0; }
double ScatterAddOp::getFlops(ArrayRef<double> factorSizes) {
  int64_t axis = getAxis();
  if (axis < 0 || axis >= static_cast<int64_t>(factorSizes.size()) ||
      factorSizes[axis] == 0)
    return 0;
  return getIterationSpaceFlops(1, factorSizes) / factorSizes[axis];
}
