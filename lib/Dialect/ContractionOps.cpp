//===- ContractionOps.cpp - matmul and dot_general ------------------------===//
//
// Type inference, sharding rule, gradient rule and cost of the contractions.
// matmul is dot_general with the leading dims as batch and lhs dim -1
// contracted with rhs dim -2, and every rule here treats it so.
//
//===----------------------------------------------------------------------===//

#include "TensorOpHelpers.h"

#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

//===----------------------------------------------------------------------===//
// Type inference
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto lhs = asTensor(adaptor.getLhs()), rhs = asTensor(adaptor.getRhs());
  if (!lhs || !rhs)
    return failInference(loc, "matmul operands must be ranked tensors");
  if (lhs.getRank() < 2 || lhs.getRank() != rhs.getRank())
    return failInference(loc, "matmul operands must have the same rank >= 2, "
                              "got " +
                                  Twine(lhs.getRank()) + " and " +
                                  Twine(rhs.getRank()));
  if (lhs.getElementType() != rhs.getElementType())
    return failInference(loc, "matmul operands have different element types");
  int64_t r = lhs.getRank();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < r - 2; ++d) {
    if (lhs.getDimSize(d) != rhs.getDimSize(d))
      return failInference(loc, "matmul batch dimension " + Twine(d) +
                                    " differs: " + Twine(lhs.getDimSize(d)) +
                                    " vs " + Twine(rhs.getDimSize(d)));
    shape.push_back(lhs.getDimSize(d));
  }
  if (lhs.getDimSize(r - 1) != rhs.getDimSize(r - 2))
    return failInference(
        loc, "matmul contracting sizes differ: lhs dim " + Twine(r - 1) +
                 " is " + Twine(lhs.getDimSize(r - 1)) + ", rhs dim " +
                 Twine(r - 2) + " is " + Twine(rhs.getDimSize(r - 2)));
  shape.push_back(lhs.getDimSize(r - 2));
  shape.push_back(rhs.getDimSize(r - 1));
  types.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

LogicalResult DotGeneralOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  auto lhs = asTensor(adaptor.getLhs()), rhs = asTensor(adaptor.getRhs());
  if (!lhs || !rhs)
    return failInference(loc, "dot_general operands must be ranked tensors");
  if (lhs.getElementType() != rhs.getElementType())
    return failInference(loc,
                         "dot_general operands have different element types");
  ArrayRef<int64_t> lb = adaptor.getLhsBatchDims(),
                    rb = adaptor.getRhsBatchDims(),
                    lc = adaptor.getLhsContractingDims(),
                    rc = adaptor.getRhsContractingDims();
  if (lb.size() != rb.size())
    return failInference(loc, "dot_general batch dimension lists differ in "
                              "length");
  if (lc.size() != rc.size())
    return failInference(loc, "dot_general contracting dimension lists "
                              "differ in length");
  SmallVector<int64_t> lAll(lb), rAll(rb);
  lAll.append(lc.begin(), lc.end());
  rAll.append(rc.begin(), rc.end());
  if (failed(checkDimList(loc, lAll, lhs.getRank(), "dot_general lhs")) ||
      failed(checkDimList(loc, rAll, rhs.getRank(), "dot_general rhs")))
    return failure();
  for (size_t i = 0; i < lAll.size(); ++i)
    if (lhs.getDimSize(lAll[i]) != rhs.getDimSize(rAll[i]))
      return failInference(loc, "dot_general paired dimensions lhs " +
                                    Twine(lAll[i]) + " and rhs " +
                                    Twine(rAll[i]) + " differ in size");
  SmallVector<int64_t> shape;
  for (int64_t d : lb)
    shape.push_back(lhs.getDimSize(d));
  for (int64_t d = 0; d < lhs.getRank(); ++d)
    if (!llvm::is_contained(lAll, d))
      shape.push_back(lhs.getDimSize(d));
  for (int64_t d = 0; d < rhs.getRank(); ++d)
    if (!llvm::is_contained(rAll, d))
      shape.push_back(rhs.getDimSize(d));
  types.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Sharding rules
//===----------------------------------------------------------------------===//

/// Contraction with explicit batch/contracting pairs; the result is batch,
/// then free lhs dims, then free rhs dims (dot_general's convention, which
/// matmul follows with batch = leading dims, contract = lhs[-1] x rhs[-2]).
static ShardingRule
contractionShardingRule(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
                ArrayRef<int64_t> lhsBatch, ArrayRef<int64_t> rhsBatch,
                ArrayRef<int64_t> lhsContract, ArrayRef<int64_t> rhsContract) {
  ShardingRule rule;
  TensorFactors lhsF(lhs.size()), rhsF(rhs.size()), resF;
  auto inRange = [](int64_t d, ArrayRef<int64_t> shape) {
    return d >= 0 && d < static_cast<int64_t>(shape.size());
  };
  auto pair = [&](ArrayRef<int64_t> l, ArrayRef<int64_t> r, FactorKind kind,
                  bool inResult) {
    for (auto [ld, rd] : llvm::zip(l, r)) {
      if (!inRange(ld, lhs) || !inRange(rd, rhs))
        continue;
      int64_t f = rule.addFactor(lhs[ld], kind);
      lhsF[ld] = {f};
      rhsF[rd] = {f};
      if (inResult)
        resF.push_back({f});
    }
  };
  pair(lhsBatch, rhsBatch, FactorKind::Parallel, /*inResult=*/true);
  pair(lhsContract, rhsContract, FactorKind::Reduction, /*inResult=*/false);
  auto freeDims = [&](ArrayRef<int64_t> shape, TensorFactors &operand,
                      ArrayRef<int64_t> batch, ArrayRef<int64_t> contract) {
    for (int64_t d = 0, e = shape.size(); d < e; ++d) {
      if (llvm::is_contained(batch, d) || llvm::is_contained(contract, d))
        continue;
      int64_t f = rule.addFactor(shape[d], FactorKind::Parallel);
      operand[d] = {f};
      resF.push_back({f});
    }
  };
  freeDims(lhs, lhsF, lhsBatch, lhsContract);
  freeDims(rhs, rhsF, rhsBatch, rhsContract);
  rule.addOperand(std::move(lhsF));
  rule.addOperand(std::move(rhsF));
  rule.addResult(std::move(resF));
  return rule;
}

ShardingRule MatmulOp::getShardingRule() {
  ArrayRef<int64_t> lhs = shapeOf(getLhs()), rhs = shapeOf(getRhs());
  int64_t rank = lhs.size();
  SmallVector<int64_t> batch;
  for (int64_t d = 0; d + 2 < rank; ++d)
    batch.push_back(d);
  return contractionShardingRule(lhs, rhs, batch, batch, {rank - 1}, {rank - 2});
}

ShardingRule DotGeneralOp::getShardingRule() {
  return contractionShardingRule(shapeOf(getLhs()), shapeOf(getRhs()),
                         getLhsBatchDims(), getRhsBatchDims(),
                         getLhsContractingDims(), getRhsContractingDims());
}

//===----------------------------------------------------------------------===//
// Gradient rules
//===----------------------------------------------------------------------===//

/// Position of `x` in ascending `sorted`.
static int64_t rankIn(ArrayRef<int64_t> sorted, int64_t x) {
  return llvm::lower_bound(sorted, x) - sorted.begin();
}

/// Cotangents of a contraction in dot_general form (matmul is one too).
/// `g`'s dims are batch, then lhs free, then rhs free. Each operand's
/// cotangent is one dot_general of `g` with the other operand, contracting
/// the other operand's free dims, then a transpose into the operand's dim
/// order when that differs.
static void contractionGradient(GradientBuilder &gb, Value lhs, Value rhs, Value g,
                     ArrayRef<int64_t> lb, ArrayRef<int64_t> rb,
                     ArrayRef<int64_t> lc, ArrayRef<int64_t> rc,
                     ArrayRef<bool> wanted, SmallVectorImpl<Value> &out) {
  int64_t nb = lb.size();
  SmallVector<int64_t> lf = otherDims(rankOf(lhs), lb, lc);
  SmallVector<int64_t> rf = otherDims(rankOf(rhs), rb, rc);
  SmallVector<int64_t> gBatch = iota(0, nb);
  SmallVector<int64_t> gLhsFree = iota(nb, nb + lf.size());
  SmallVector<int64_t> gRhsFree =
      iota(nb + lf.size(), nb + lf.size() + rf.size());
  if (want(wanted, 0)) {
    // [batch, lhs free, rhs contracting dims in rhs order]
    Value p = gb.dotGeneral(g, rhs, gBatch, rb, gRhsFree, rf);
    SmallVector<int64_t> sortedRc(rc);
    llvm::sort(sortedRc);
    SmallVector<int64_t> perm(rankOf(lhs));
    for (auto [i, d] : llvm::enumerate(lb))
      perm[d] = i;
    for (auto [j, d] : llvm::enumerate(lf))
      perm[d] = nb + j;
    for (auto [c, d] : llvm::enumerate(lc))
      perm[d] = nb + lf.size() + rankIn(sortedRc, rc[c]);
    out[0] = gb.transpose(p, perm);
  }
  if (want(wanted, 1)) {
    // [batch, lhs contracting dims in lhs order, rhs free]
    Value p = gb.dotGeneral(lhs, g, lb, gBatch, lf, gLhsFree);
    SmallVector<int64_t> sortedLc(lc);
    llvm::sort(sortedLc);
    SmallVector<int64_t> perm(rankOf(rhs));
    for (auto [i, d] : llvm::enumerate(rb))
      perm[d] = i;
    for (auto [c, d] : llvm::enumerate(rc))
      perm[d] = nb + rankIn(sortedLc, lc[c]);
    for (auto [j, d] : llvm::enumerate(rf))
      perm[d] = nb + lc.size() + j;
    out[1] = gb.transpose(p, perm);
  }
}

LogicalResult MatmulOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                               Value g, ArrayRef<bool> wanted,
                                               SmallVectorImpl<Value> &out) {
  // lhs [b..., i, k] x rhs [b..., k, j]: a dot_general with the leading
  // dims as batch, lhs dim -1 contracted with rhs dim -2.
  clearCotangents(*this, out);
  int64_t r = rankOf(getLhs());
  SmallVector<int64_t> batch = iota(0, r - 2);
  GradientBuilder gb(b, loc);
  contractionGradient(gb, getLhs(), getRhs(), g, batch, batch, {r - 1}, {r - 2},
                  wanted, out);
  return success();
}

LogicalResult
DotGeneralOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                     ArrayRef<bool> wanted,
                                     SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out);
  GradientBuilder gb(b, loc);
  contractionGradient(gb, getLhs(), getRhs(), g, getLhsBatchDims(),
                  getRhsBatchDims(), getLhsContractingDims(),
                  getRhsContractingDims(), wanted, out);
  return success();
}

//===----------------------------------------------------------------------===//
// Cost: a multiply and an add per point of the iteration space
//===----------------------------------------------------------------------===//

double MatmulOp::getFlops(ArrayRef<double> factorSizes) {
  return getIterationSpaceFlops(2, factorSizes);
}

double DotGeneralOp::getFlops(ArrayRef<double> factorSizes) {
  return getIterationSpaceFlops(2, factorSizes);
}

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

Value shardc::buildDotGeneral(OpBuilder &b, Location loc, Value lhs, Value rhs,
                              ArrayRef<int64_t> lb, ArrayRef<int64_t> rb,
                              ArrayRef<int64_t> lc, ArrayRef<int64_t> rc) {
  return DotGeneralOp::create(b, loc, lhs, rhs, b.getDenseI64ArrayAttr(lb),
                              b.getDenseI64ArrayAttr(rb),
                              b.getDenseI64ArrayAttr(lc),
                              b.getDenseI64ArrayAttr(rc));
}
