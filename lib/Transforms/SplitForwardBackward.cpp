//===- SplitForwardBackward.cpp - a VJP program as forward + backward -----===//

#include "shardc/Transforms/SplitForwardBackward.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace shardc;

/// Copies the attributes of `from`'s arguments [begin, end) onto `to`'s
/// arguments starting at `at`.
static void copyArgAttrs(func::FuncOp from, func::FuncOp to, unsigned begin,
                         unsigned end, unsigned at) {
  for (unsigned i = begin; i < end; ++i)
    to.setArgAttrs(at + i - begin, from.getArgAttrDict(i));
}

FailureOr<ForwardBackwardSplit>
shardc::splitForwardBackward(func::FuncOp vjp, unsigned numPrimalArgs,
                             unsigned numOutputs, StringRef forwardName,
                             StringRef backwardName) {
  if (!vjp.getBody().hasOneBlock())
    return vjp.emitError("splitting forward and backward needs a function "
                         "with one block");
  Block &body = vjp.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return vjp.emitError("the function must end with func.return");
  if (numPrimalArgs > vjp.getNumArguments() ||
      numOutputs > ret.getNumOperands())
    return vjp.emitError() << "cannot split @" << vjp.getSymName() << ": "
                           << numPrimalArgs << " primal arguments and "
                           << numOutputs << " outputs do not fit its "
                           << vjp.getNumArguments() << " arguments and "
                           << ret.getNumOperands() << " results";

  // The forward half: every op the primal outputs depend on.
  llvm::DenseSet<Operation *> forwardOps;
  SmallVector<Value> worklist(ret.getOperands().take_front(numOutputs));
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || !forwardOps.insert(def).second)
      continue;
    llvm::append_range(worklist, def->getOperands());
  }
  for (Operation &op : body.without_terminator())
    if (forwardOps.contains(&op))
      for (Value operand : op.getOperands())
        if (auto arg = dyn_cast<BlockArgument>(operand);
            arg && arg.getArgNumber() >= numPrimalArgs)
          return op.emitError("an op the primal outputs need reads a "
                              "cotangent; this is not a VJP function");

  // Residuals: forward values the backward half (or the gradients) reads.
  llvm::SetVector<Value> residuals;
  for (Operation &op : body.without_terminator())
    if (!forwardOps.contains(&op))
      for (Value operand : op.getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && forwardOps.contains(def))
          residuals.insert(operand);
  for (Value grad : ret.getOperands().drop_front(numOutputs))
    if (Operation *def = grad.getDefiningOp(); def && forwardOps.contains(def))
      residuals.insert(grad);

  OpBuilder builder(vjp->getContext());
  builder.setInsertionPointAfter(vjp);
  auto primalTypes = vjp.getArgumentTypes().take_front(numPrimalArgs);
  auto cotangentTypes = vjp.getArgumentTypes().drop_front(numPrimalArgs);
  auto resultTypes = vjp.getResultTypes();
  SmallVector<Type> residualTypes;
  for (Value r : residuals)
    residualTypes.push_back(r.getType());

  // forward(args...) -> (outputs..., residuals...)
  SmallVector<Type> forwardResults(resultTypes.take_front(numOutputs));
  llvm::append_range(forwardResults, residualTypes);
  auto forward = func::FuncOp::create(
      builder, vjp.getLoc(), forwardName,
      builder.getFunctionType(primalTypes, forwardResults));
  forward->setDiscardableAttrs(vjp->getDiscardableAttrDictionary());
  copyArgAttrs(vjp, forward, 0, numPrimalArgs, 0);
  for (unsigned i = 0; i < numOutputs; ++i)
    forward.setResultAttrs(i, vjp.getResultAttrDict(i));
  {
    Block *entry = forward.addEntryBlock();
    IRMapping map;
    map.map(body.getArguments().take_front(numPrimalArgs),
            entry->getArguments());
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    for (Operation &op : body.without_terminator())
      if (forwardOps.contains(&op))
        b.clone(op, map);
    SmallVector<Value> results;
    for (Value v : ret.getOperands().take_front(numOutputs))
      results.push_back(map.lookupOrDefault(v));
    for (Value r : residuals)
      results.push_back(map.lookup(r));
    func::ReturnOp::create(b, ret.getLoc(), results);
  }

  // backward(args..., residuals..., cotangents...) -> (gradients...)
  SmallVector<Type> backwardArgs(primalTypes);
  llvm::append_range(backwardArgs, residualTypes);
  llvm::append_range(backwardArgs, cotangentTypes);
  builder.setInsertionPointAfter(forward);
  auto backward = func::FuncOp::create(
      builder, vjp.getLoc(), backwardName,
      builder.getFunctionType(backwardArgs,
                              resultTypes.drop_front(numOutputs)));
  backward->setDiscardableAttrs(vjp->getDiscardableAttrDictionary());
  copyArgAttrs(vjp, backward, 0, numPrimalArgs, 0);
  copyArgAttrs(vjp, backward, numPrimalArgs, vjp.getNumArguments(),
               numPrimalArgs + residuals.size());
  for (unsigned i = numOutputs; i < resultTypes.size(); ++i)
    backward.setResultAttrs(i - numOutputs, vjp.getResultAttrDict(i));
  {
    Block *entry = backward.addEntryBlock();
    IRMapping map;
    map.map(body.getArguments().take_front(numPrimalArgs),
            entry->getArguments().take_front(numPrimalArgs));
    for (auto [i, r] : llvm::enumerate(residuals))
      map.map(r, entry->getArgument(numPrimalArgs + i));
    map.map(body.getArguments().drop_front(numPrimalArgs),
            entry->getArguments().drop_front(numPrimalArgs + residuals.size()));
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    for (Operation &op : body.without_terminator())
      if (!forwardOps.contains(&op))
        b.clone(op, map);
    SmallVector<Value> results;
    for (Value v : ret.getOperands().drop_front(numOutputs))
      results.push_back(map.lookupOrDefault(v));
    func::ReturnOp::create(b, ret.getLoc(), results);
  }
  return ForwardBackwardSplit{forward, backward,
                              static_cast<unsigned>(residuals.size())};
}
