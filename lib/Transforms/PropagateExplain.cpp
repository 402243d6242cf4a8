//===- PropagateExplain.cpp - remarks of --shardc-propagate=explain=true --===//
//
// After the fixed point, one remark per value (its sharding and where it came
// from) and one per conflict the final shardings still meet (which candidate
// lost and why). Conflicts are recomputed from the final state rather than
// collected during the run, so each is reported once and describes the
// shardings actually written.
//
//===----------------------------------------------------------------------===//

#include "Propagation.h"

#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/ValueNames.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

std::string shardc::detail::formatLoc(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    llvm::StringRef base = llvm::sys::path::filename(file.getFilename());
    // Line 0 is a file without positions (an ONNX model): the file alone.
    if (file.getLine() == 0)
      return base.str();
    return (base + ":" + Twine(file.getLine()) + ":" + Twine(file.getColumn()))
        .str();
  }
  if (auto name = dyn_cast<NameLoc>(loc)) {
    // JSON import names ops without a file position, and ONNX import names
    // them by their node in a file without positions: the name places them.
    std::string quoted = "\"" + name.getName().getValue().str() + "\"";
    Location child = name.getChildLoc();
    if (auto file = dyn_cast<FileLineColLoc>(child);
        file && file.getLine() == 0)
      return quoted + " in " + formatLoc(child);
    std::string inner = formatLoc(child);
    return inner != "unknown location" ? inner : quoted;
  }
  if (auto site = dyn_cast<CallSiteLoc>(loc))
    return formatLoc(site.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string s = formatLoc(inner); s != "unknown location")
        return s;
  return "unknown location";
}

static std::string formatAxes(ArrayRef<StringRef> axes) {
  std::string out = "{";
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(axes, os,
                        [&](StringRef a) { os << "\"" << a << "\""; });
  os << "}";
  return out;
}

std::string FunctionPropagation::describeTensor(unsigned id) const {
  const TensorState &state = tensors[id];
  if (state.funcResult >= 0)
    return "output #" + std::to_string(state.funcResult);
  return describeValue(state.value);
}

std::string FunctionPropagation::describeNodeTensor(const Node &node,
                                                    int pos) const {
  if (pos < 0)
    return "?";
  std::string what = describeTensor(node.tensors[pos]);
  if (isa<func::ReturnOp>(node.op))
    return pos == 0 ? "returned " + what : what;
  unsigned numOperands = node.rule.getNumOperands();
  if (unsigned(pos) < numOperands)
    return "operand #" + std::to_string(pos) + " (" + what + ")";
  return "result #" + std::to_string(pos - numOperands) + " (" + what + ")";
}

void FunctionPropagation::emitValueRemark(Location loc, unsigned id,
                                          Type type) const {
  const TensorState &state = tensors[id];
  InFlightDiagnostic diag = emitRemark(loc);
  diag << describeTensor(id) << " is " << finalSharding(id, type) << " (";
  auto annotation = [&]() -> std::string {
    if (state.origin >= 0 && size_t(state.origin) < annotations.size())
      return annotations[state.origin];
    return "an annotation";
  };
  // Its dims' axes may come from different annotations: each is named
  // with the dims it split.
  auto origins = [&]() -> std::string {
    SmallVector<std::pair<int, std::string>> seen;
    for (size_t d = 0; d < state.sharding.getRank(); ++d) {
      if (state.sharding.getDimAxes(d).empty())
        continue;
      int o = d < state.dimOrigin.size() && state.dimOrigin[d] >= 0
                  ? state.dimOrigin[d]
                  : state.origin;
      auto it = llvm::find_if(seen, [&](auto &e) { return e.first == o; });
      if (it == seen.end())
        seen.push_back({o, "dim " + std::to_string(d)});
      else
        it->second += ", " + std::to_string(d);
    }
    if (seen.size() <= 1)
      return annotation();
    std::string out;
    for (auto [i, e] : llvm::enumerate(seen)) {
      if (i)
        out += " and ";
      out += (e.first >= 0 && size_t(e.first) < annotations.size()
                  ? annotations[e.first]
                  : std::string("an annotation")) +
             " (" + e.second + ")";
    }
    return out;
  };
  if (state.isUser)
    diag << "annotation: " << annotation() << ")";
  else if (state.sharding && state.via)
    diag << "propagated from " << origins() << " through '"
         << state.via->getName() << "' at " << formatLoc(state.via->getLoc())
         << ")";
  else
    diag << "no sharding reached it: replicated)";
}

void FunctionPropagation::emitConflictRemarks(const Node &node) const {
  const FactorShardings *fs = computeFactors(node);
  if (!fs)
    return;
  auto factor = [&](int64_t f) {
    const Factor &info = node.rule.getFactor(f);
    return "factor f" + std::to_string(f) + " (size " +
           std::to_string(info.size) + ", " +
           stringifyFactorKind(info.kind).str() + ")";
  };
  for (const FactorConflict &c : fs->getConflicts()) {
    InFlightDiagnostic diag = emitRemark(node.op->getLoc());
    std::string reason = describeConflictReason(c.reason).str();
    switch (c.kind) {
    case FactorConflict::Kind::IncompatibleCandidates:
      diag << "conflict on " << factor(c.factor) << " of '"
           << node.op->getName() << "': " << formatAxes(c.loserAxes) << " from "
           << describeNodeTensor(node, c.loserTensor) << " lost to "
           << formatAxes(c.winnerAxes) << " from "
           << describeNodeTensor(node, c.winnerTensor) << " (" << reason << ")";
      break;
    case FactorConflict::Kind::AxisClaimedTwice:
      diag << "conflict on mesh axis \"" << c.axis << "\" of '"
           << node.op->getName() << "': " << factor(c.factor) << ", from "
           << describeNodeTensor(node, c.winnerTensor) << ", keeps it; "
           << factor(c.loserFactor) << ", from "
           << describeNodeTensor(node, c.loserTensor) << ", drops "
           << formatAxes(c.loserAxes) << " (" << reason << ")";
      break;
    case FactorConflict::Kind::Unshardable:
      diag << formatAxes(c.loserAxes) << " of "
           << describeNodeTensor(node, c.loserTensor) << " on "
           << factor(c.factor) << " of '" << node.op->getName()
           << "' cannot be kept (" << reason << ")";
      break;
    }
  }
}

void FunctionPropagation::emitRemarks() {
  for (BlockArgument arg : func.getBody().front().getArguments())
    if (isa<RankedTensorType>(arg.getType()))
      emitValueRemark(arg.getLoc(), getId(arg), arg.getType());

  llvm::DenseMap<Operation *, SmallVector<unsigned, 1>> opNodes;
  for (auto [n, node] : llvm::enumerate(nodes))
    opNodes[node.op].push_back(n);
  Operation *returnOp = nullptr;
  func.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isa<func::ReturnOp>(op) && op->getParentOp() == func)
      returnOp = op;
    if (auto it = opNodes.find(op); it != opNodes.end())
      for (unsigned n : it->second)
        emitConflictRemarks(nodes[n]);
    if (op->getNumResults() == 1 &&
        isa<RankedTensorType>(op->getResult(0).getType()))
      emitValueRemark(op->getLoc(), getId(op->getResult(0)),
                      op->getResult(0).getType());
  });
  Location resultLoc = returnOp ? returnOp->getLoc() : func.getLoc();
  for (auto [i, id] : llvm::enumerate(resultIds))
    if (isa<RankedTensorType>(func.getResultTypes()[i]))
      emitValueRemark(resultLoc, id, func.getResultTypes()[i]);
}
