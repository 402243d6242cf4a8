//===- Autodiff.cpp - --shardc-autodiff -----------------------------------===//
//
// Reverse-mode differentiation of each function into its vector-Jacobian
// product. The forward ops stay; cotangents flow from the new cotangent
// arguments back through the ops in reverse order, each op's cotangents
// built by its gradient rule (DifferentiableOpInterface), and the gradients
// of the differentiated arguments are appended to the results.
//
// Only what the requested gradients need is built: an operand's cotangent
// is asked for only if the operand depends on a differentiated argument
// (it is *active*), and an op is visited only if its result's cotangent is
// not zero. Ops left unused at the end (a rule's helper that turned out
// unneeded) are erased.
//
//===----------------------------------------------------------------------===//

#include "shardc/Transforms/Autodiff.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

namespace shardc {
#define GEN_PASS_DEF_SHARDCAUTODIFF
#include "shardc/Transforms/Passes.h.inc"
} // namespace shardc

using namespace mlir;
using namespace shardc;

namespace {

/// `loc` without the value name it carries: the helper ops a rule builds
/// point at the forward op's source, but must not be named after its result.
Location withoutName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return withoutName(name.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    SmallVector<Location> inner;
    for (Location l : fused.getLocations())
      inner.push_back(withoutName(l));
    return FusedLoc::get(loc.getContext(), inner, fused.getMetadata());
  }
  return loc;
}

Location withName(Location loc, const Twine &name) {
  return NameLoc::get(StringAttr::get(loc.getContext(), name),
                      withoutName(loc));
}

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// The sharding to give a gradient or cotangent of a value annotated
/// `attr`: its layout, without pending sums (a cotangent is a whole value).
Attribute withoutPartial(Attribute attr) {
  auto sharding = dyn_cast_or_null<ShardingAttr>(attr);
  if (!sharding || !sharding.isPartial())
    return attr;
  return ShardingAttr::get(attr.getContext(), sharding.getMesh(),
                           sharding.getDims(),
                           ArrayAttr::get(attr.getContext(), {}));
}

/// Records the ops the pass creates, so that only they are renamed or
/// erased, never a forward op.
struct CreatedOps : OpBuilder::Listener {
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    ops.insert(op);
  }
  llvm::SetVector<Operation *> ops;
};

/// Builds the gradients of the `wrt` arguments of one function.
class FunctionAutodiff {
public:
  FunctionAutodiff(func::FuncOp func, ArrayRef<unsigned> wrt)
      : func(func), wrtArgs(wrt), builder(func.getContext()) {
    builder.setListener(&created);
  }
  FailureOr<SmallVector<Value>> run(ArrayRef<Value> resultCotangents);

private:
  /// Adds `contribution` to the cotangent of `value`.
  void accumulate(Value value, Value contribution, Location loc);
  /// Gives the op computing the whole cotangent of `value`, if the pass
  /// built it, the name "<value's name>.grad" and `value`'s sharding (unless
  /// it has a name or a sharding already): a cotangent is laid out like its
  /// value, which is what the partitioner needs to shard the backward pass
  /// as the forward one.
  void finishCotangent(Value value, Value cotangent);
  /// The gradient of argument `i` as a value of its own named "<name>.grad":
  /// results are written under their value's name.
  Value finishGradient(unsigned i, Location loc);
  /// Erases the created ops that nothing (and no gradient) uses.
  void eraseUnused(ArrayRef<Value> gradients);

  func::FuncOp func;
  ArrayRef<unsigned> wrtArgs;
  OpBuilder builder;
  CreatedOps created;
  llvm::DenseSet<Value> active;
  llvm::DenseMap<Value, Value> cotangents;
  llvm::DenseSet<Value> gradientValues;
};

} // namespace

LogicalResult shardc::checkDifferentiable(func::FuncOp func) {
  if (func->hasAttr(ShardcDialect::getSpmdAttrName()))
    return func.emitError()
           << "cannot differentiate @" << func.getSymName()
           << ": it is already partitioned (shardc.spmd); differentiate the "
              "global program, then propagate and partition";
  if (!func.getBody().hasOneBlock())
    return func.emitError("autodiff needs a function with a single block");
  for (Operation &op : func.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    if (isa<CollectiveOpInterface>(op))
      return op.emitError()
             << "cannot differentiate a partitioned program: '" << op.getName()
             << "' is a collective; differentiate the global program, then "
                "propagate and partition";
    if (!isa<DifferentiableOpInterface>(op))
      return op.emitError() << "'" << op.getName()
                            << "' has no gradient rule "
                               "(DifferentiableOpInterface), so @"
                            << func.getSymName() << " cannot be differentiated";
    if (op.getNumResults() != 1)
      return op.emitError("autodiff expects ops with one result");
  }
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (!isFloatTensor(type))
      return func.emitError() << "autodiff needs float tensor results; result #"
                              << i << " is " << type;
  return success();
}

FailureOr<SmallVector<unsigned>>
shardc::selectDifferentiatedArguments(func::FuncOp func,
                                      ArrayRef<std::string> wrtNames) {
  SmallVector<unsigned> wrtArgs;
  unsigned n = func.getNumArguments();
  if (!wrtNames.empty()) {
    llvm::StringMap<unsigned> byName;
    for (unsigned i = 0; i < n; ++i)
      byName.try_emplace(getArgumentName(func, i), i);
    SmallVector<std::string> unknown;
    llvm::DenseSet<unsigned> seen;
    for (const std::string &name : wrtNames) {
      auto it = byName.find(name);
      if (it == byName.end())
        unknown.push_back("'" + name + "'");
      else if (!isFloatTensor(func.getArgumentTypes()[it->second]))
        return func.emitError()
               << "autodiff: input '" << name << "' is "
               << func.getArgumentTypes()[it->second]
               << ", which has no gradient (only floating-point inputs are "
                  "differentiated)";
      else if (seen.insert(it->second).second)
        wrtArgs.push_back(it->second);
    }
    if (!unknown.empty()) {
      std::string known;
      for (unsigned i = 0; i < n; ++i)
        known += (i ? ", " : "") + getArgumentName(func, i);
      return func.emitError()
             << "autodiff: @" << func.getSymName() << " has no input named "
             << llvm::join(unknown, ", ")
             << " (wrt); its inputs are: " << known;
    }
    llvm::sort(wrtArgs);
    return wrtArgs;
  }
  // Integer inputs (token ids, labels) are data: never differentiated.
  auto differentiable = [&](unsigned i) {
    return isFloatTensor(func.getArgumentTypes()[i]);
  };
  for (unsigned i = 0; i < n; ++i)
    if (func.getArgAttr(i, ShardcDialect::getParamAttrName()) &&
        differentiable(i))
      wrtArgs.push_back(i);
  if (wrtArgs.empty())
    for (unsigned i = 0; i < n; ++i)
      if (differentiable(i))
        wrtArgs.push_back(i);
  return wrtArgs;
}

namespace {

void FunctionAutodiff::accumulate(Value value, Value contribution,
                                  Location loc) {
  auto [it, inserted] = cotangents.try_emplace(value, contribution);
  if (!inserted)
    it->second = buildAdd(builder, loc, it->second, contribution);
}

void FunctionAutodiff::finishCotangent(Value value, Value cotangent) {
  Operation *def = cotangent.getDefiningOp();
  if (!def || !created.ops.contains(def))
    return;
  // A constraint's layout is its own.
  if (getConstrainedSharding(def))
    return;
  StringRef name = getNameFromLoc(value.getLoc());
  if (!name.empty() && getNameFromLoc(def->getLoc()).empty())
    def->setLoc(withName(def->getLoc(), name + ".grad"));
  StringRef shardingName = ShardcDialect::getShardingAttrName();
  if (Operation *valueDef = value.getDefiningOp())
    if (Attribute sharding = valueDef->getAttr(shardingName);
        sharding && !def->hasAttr(shardingName))
      def->setAttr(shardingName, withoutPartial(sharding));
}

Value FunctionAutodiff::finishGradient(unsigned i, Location loc) {
  BlockArgument arg = func.getArgument(i);
  std::string name = getArgumentName(func, i) + ".grad";
  Value grad = cotangents.lookup(arg);
  if (!grad) {
    // No path from the argument to any result.
    grad = buildSplatConstant(builder, withName(loc, name), arg.getType(), 0.0);
  } else if (Operation *def = grad.getDefiningOp();
             def && created.ops.contains(def) &&
             getNameFromLoc(def->getLoc()).empty() &&
             !gradientValues.contains(grad)) {
    def->setLoc(withName(def->getLoc(), name));
  } else {
    // A cotangent argument, a value named for another use, or another
    // argument's gradient: a same-shape reshape is a free copy that can
    // carry this output's name.
    grad = buildReshape(builder, withName(loc, name), arg.getType(), grad);
  }
  gradientValues.insert(grad);
  return grad;
}

void FunctionAutodiff::eraseUnused(ArrayRef<Value> gradients) {
  llvm::DenseSet<Operation *> keep;
  for (Value g : gradients)
    if (Operation *def = g.getDefiningOp())
      keep.insert(def);
  // Reverse creation order erases a chain of unused ops in one sweep.
  for (Operation *op : llvm::reverse(created.ops))
    if (op->use_empty() && !keep.contains(op))
      op->erase();
}

FailureOr<SmallVector<Value>>
FunctionAutodiff::run(ArrayRef<Value> resultCotangents) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);

  for (unsigned i : wrtArgs)
    active.insert(func.getArgument(i));
  for (Operation *op : forward)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op->getResult(0));

  builder.setInsertionPoint(ret);
  for (auto [value, seed] : llvm::zip(ret.getOperands(), resultCotangents))
    if (seed && active.contains(value))
      accumulate(value, seed, ret.getLoc());

  SmallVector<bool> wanted;
  SmallVector<Value> operandCotangents;
  for (Operation *op : llvm::reverse(forward)) {
    Value result = op->getResult(0);
    Value g = cotangents.lookup(result);
    if (!g)
      continue;
    finishCotangent(result, g);
    wanted.clear();
    for (Value v : op->getOperands())
      wanted.push_back(active.contains(v));
    if (llvm::none_of(wanted, [](bool w) { return w; }))
      continue;
    Location loc = withoutName(op->getLoc());
    operandCotangents.clear();
    if (failed(cast<DifferentiableOpInterface>(op).buildOperandCotangents(
            builder, loc, g, wanted, operandCotangents)))
      return failure();
    for (auto [v, c] : llvm::zip(op->getOperands(), operandCotangents)) {
      if (!c)
        continue;
      if (c.getType() != v.getType())
        return op->emitError()
               << "internal error: the gradient rule of '" << op->getName()
               << "' built a cotangent of type " << c.getType() << " for an "
               << "operand of type " << v.getType();
      accumulate(v, c, loc);
    }
  }

  SmallVector<Value> gradients;
  for (unsigned i : wrtArgs)
    gradients.push_back(finishGradient(i, ret.getLoc()));
  eraseUnused(gradients);
  return gradients;
}

} // namespace

FailureOr<SmallVector<Value>>
shardc::buildGradients(func::FuncOp func, ArrayRef<unsigned> wrt,
                       ArrayRef<Value> resultCotangents) {
  return FunctionAutodiff(func, wrt).run(resultCotangents);
}

Location shardc::withValueName(Location loc, const Twine &name) {
  return withName(loc, name);
}

/// The pass: `@f(args) -> results` becomes
/// `@f(args, cotangents) -> (results, gradients)`.
static LogicalResult differentiateInPlace(func::FuncOp func,
                                          ArrayRef<std::string> names) {
  if (failed(checkDifferentiable(func)))
    return failure();
  FailureOr<SmallVector<unsigned>> wrtArgs =
      selectDifferentiatedArguments(func, names);
  if (failed(wrtArgs))
    return failure();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  std::vector<std::string> resultNames = getResultNames(func);

  // One cotangent argument per result.
  MLIRContext *ctx = func.getContext();
  unsigned numArgs = func.getNumArguments();
  unsigned numResults = func.getNumResults();
  SmallVector<unsigned> argIndices(numResults, numArgs);
  SmallVector<Type> argTypes(func.getResultTypes());
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<Location> argLocs;
  for (unsigned i = 0; i < numResults; ++i) {
    std::string name = resultNames[i] + ".grad";
    NamedAttrList attrs;
    attrs.append(ShardcDialect::getNameAttrName(), StringAttr::get(ctx, name));
    if (Attribute s =
            func.getResultAttr(i, ShardcDialect::getShardingAttrName()))
      attrs.append(ShardcDialect::getShardingAttrName(), withoutPartial(s));
    argAttrs.push_back(attrs.getDictionary(ctx));
    argLocs.push_back(withName(ret.getLoc(), name));
  }
  if (failed(func.insertArguments(argIndices, argTypes, argAttrs, argLocs)))
    return func.emitError("autodiff could not add the cotangent arguments");
  SmallVector<Value> seeds;
  for (unsigned i = 0; i < numResults; ++i)
    seeds.push_back(func.getArgument(numArgs + i));
  FailureOr<SmallVector<Value>> gradients =
      buildGradients(func, *wrtArgs, seeds);
  if (failed(gradients))
    return failure();

  // The gradients become results, annotated like their arguments.
  SmallVector<Value> results(ret.getOperands());
  SmallVector<unsigned> resultIndices;
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resultAttrs;
  for (auto [i, gradient] : llvm::zip(*wrtArgs, *gradients)) {
    results.push_back(gradient);
    resultIndices.push_back(numResults);
    resultTypes.push_back(func.getArgument(i).getType());
    NamedAttrList attrs;
    if (Attribute s = func.getArgAttr(i, ShardcDialect::getShardingAttrName()))
      attrs.append(ShardcDialect::getShardingAttrName(), withoutPartial(s));
    resultAttrs.push_back(attrs.getDictionary(ctx));
  }
  ret->setOperands(results);
  if (failed(func.insertResults(resultIndices, resultTypes, resultAttrs)))
    return func.emitError("autodiff could not add the gradient results");
  return success();
}

namespace {

struct AutodiffPass : public shardc::impl::ShardcAutodiffBase<AutodiffPass> {
  using ShardcAutodiffBase::ShardcAutodiffBase;

  void runOnOperation() override {
    SmallVector<std::string> names(wrt.begin(), wrt.end());
    for (auto func : llvm::to_vector(getOperation().getOps<func::FuncOp>())) {
      if (func.isExternal())
        continue;
      if (failed(differentiateInPlace(func, names)))
        return signalPassFailure();
    }
  }
};

} // namespace
