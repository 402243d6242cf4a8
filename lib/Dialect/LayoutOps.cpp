//===- LayoutOps.cpp - transpose, reshape and broadcast_in_dim ------------===//
//
// Verifiers, type inference, sharding rules, gradient rules and cost of the
// ops that move elements without computing on them.
//
//===----------------------------------------------------------------------===//

#include "TensorOpHelpers.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"
#include "shardc/Dialect/TensorOpQueries.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

//===----------------------------------------------------------------------===//
// Verifiers and type inference
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = asTensor(adaptor.getInput());
  if (!input)
    return failInference(loc, "transpose operand must be a ranked tensor");
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return failInference(loc, "transpose permutation has " +
                                  Twine(perm.size()) + " entries but rank is " +
                                  Twine(input.getRank()));
  if (failed(checkDimList(loc, perm, input.getRank(), "transpose")))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(input.getDimSize(d));
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

/// Element count, or -1 on int64 overflow.
static int64_t checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    if (s < 0 || __builtin_mul_overflow(n, s, &n))
      return -1;
  return n;
}

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("operand and result element types differ");
  int64_t a = checkedNumElements(in.getShape()),
          b = checkedNumElements(out.getShape());
  if (a < 0 || b < 0)
    return emitOpError("element count overflows 64 bits");
  if (a != b)
    return emitOpError() << "cannot reshape " << in << " (" << a
                         << " elements) into " << out << " (" << b
                         << " elements)";
  return success();
}

LogicalResult BroadcastInDimOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("operand and result element types differ");
  ArrayRef<int64_t> dims = getDims();
  if (static_cast<int64_t>(dims.size()) != in.getRank())
    return emitOpError() << "dims has " << dims.size()
                         << " entries but the operand has rank "
                         << in.getRank();
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= out.getRank())
      return emitOpError() << "dims[" << i << "] = " << d
                           << " is out of range for result rank "
                           << out.getRank();
    if (i > 0 && dims[i - 1] >= d)
      return emitOpError("dims must be strictly increasing");
  }
  for (auto [i, d] : llvm::enumerate(dims)) {
    int64_t s = in.getDimSize(i);
    if (s != 1 && s != out.getDimSize(d))
      return emitOpError() << "operand dim " << i << " of size " << s
                           << " cannot broadcast to result dim " << d
                           << " of size " << out.getDimSize(d);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Sharding rules
//===----------------------------------------------------------------------===//

/// Factorizes the reshape `in -> out` (see docs/propagation.md). Dims are
/// grouped into the smallest runs whose products agree; within a group, the
/// sizes are split into common factors, major first, as long as one
/// remaining size divides the other. A group that cannot be split that way
/// (`[6,4] -> [4,6]`) gets a NeedReplication factor per dim, since its
/// elements move between devices whatever the sharding. Size-1 dims have no
/// factor.
static ShardingRule reshapeRule(ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  ShardingRule rule;
  TensorFactors inF(in.size()), outF(out.size());
  size_t n = in.size(), m = out.size();
  auto replicateDims = [&](size_t i0, size_t i1, size_t j0, size_t j1) {
    for (size_t i = i0; i < i1 && i < n; ++i)
      if (in[i] != 1)
        inF[i] = {rule.addFactor(in[i], FactorKind::NeedReplication)};
    for (size_t j = j0; j < j1 && j < m; ++j)
      if (out[j] != 1)
        outF[j] = {rule.addFactor(out[j], FactorKind::NeedReplication)};
  };
  bool hasZero = llvm::is_contained(in, 0) || llvm::is_contained(out, 0);
  size_t i = 0, j = 0;
  while (!hasZero && (i < n || j < m)) {
    if (i < n && in[i] == 1) {
      ++i;
      continue;
    }
    if (j < m && out[j] == 1) {
      ++j;
      continue;
    }
    if (i == n || j == m)
      break; // element counts differ: the verifier rejects this
    // The smallest group [i, i1) x [j, j1) with equal products.
    size_t i1 = i + 1, j1 = j + 1;
    int64_t pa = in[i], pb = out[j];
    while (pa != pb) {
      if (pa < pb && i1 < n)
        pa *= in[i1++];
      else if (pb < pa && j1 < m)
        pb *= out[j1++];
      else
        break;
    }
    if (pa != pb) {
      replicateDims(i, n, j, m);
      i = n;
      j = m;
      break;
    }
    // Split the group into common factors, major first.
    struct Step {
      int64_t size;
      size_t inDim, outDim;
    };
    SmallVector<Step> steps;
    size_t a = i, b = j;
    int64_t ra = in[a], rb = out[b];
    bool followable = true;
    while (a < i1 && b < j1) {
      if (ra == 1) {
        if (++a < i1)
          ra = in[a];
        continue;
      }
      if (rb == 1) {
        if (++b < j1)
          rb = out[b];
        continue;
      }
      if (ra % rb != 0 && rb % ra != 0) {
        followable = false;
        break;
      }
      int64_t size = std::min(ra, rb);
      steps.push_back({size, a, b});
      ra /= size;
      rb /= size;
    }
    if (followable) {
      for (const Step &s : steps) {
        int64_t f = rule.addFactor(s.size, FactorKind::Parallel);
        inF[s.inDim].push_back(f);
        outF[s.outDim].push_back(f);
      }
    } else {
      replicateDims(i, i1, j, j1);
    }
    i = i1;
    j = j1;
  }
  if (hasZero)
    replicateDims(0, n, 0, m);
  rule.addOperand(std::move(inF));
  rule.addResult(std::move(outF));
  return rule;
}

ShardingRule TransposeOp::getShardingRule() {
  ShardingRule rule;
  TensorFactors in = freshFactors(rule, shapeOf(getInput()));
  TensorFactors out;
  for (int64_t d : getPermutation())
    out.push_back(d >= 0 && d < static_cast<int64_t>(in.size()) ? in[d]
                                                                : DimFactors());
  rule.addOperand(std::move(in));
  rule.addResult(std::move(out));
  return rule;
}

ShardingRule ReshapeOp::getShardingRule() {
  return reshapeRule(shapeOf(getInput()), shapeOf(getResult()));
}

ShardingRule BroadcastInDimOp::getShardingRule() {
  ShardingRule rule;
  ArrayRef<int64_t> in = shapeOf(getInput()), out = shapeOf(getResult());
  TensorFactors outF = freshFactors(rule, out);
  TensorFactors inF(in.size());
  for (auto [i, d] : llvm::enumerate(getDims())) {
    // An expanded size-1 dim is read at index 0 on every device: no factor.
    if (i < in.size() && d >= 0 && d < static_cast<int64_t>(out.size()) &&
        in[i] == out[d])
      inF[i] = outF[d];
  }
  rule.addOperand(std::move(inF));
  rule.addResult(std::move(outF));
  return rule;
}

//===----------------------------------------------------------------------===//
// Gradient rules
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                  Value g,
                                                  ArrayRef<bool> wanted,
                                                  SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out);
  if (!want(wanted, 0))
    return success();
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, d] : llvm::enumerate(perm))
    inverse[d] = i;
  out[0] = GradientBuilder(b, loc).transpose(g, inverse);
  return success();
}

LogicalResult ReshapeOp::buildOperandCotangents(OpBuilder &b, Location loc,
                                                Value g, ArrayRef<bool> wanted,
                                                SmallVectorImpl<Value> &out) {
  clearCotangents(*this, out);
  if (want(wanted, 0))
    out[0] = ReshapeOp::create(b, loc, getInput().getType(), g);
  return success();
}

LogicalResult
BroadcastInDimOp::buildOperandCotangents(OpBuilder &b, Location loc, Value g,
                                         ArrayRef<bool> wanted,
                                         SmallVectorImpl<Value> &out) {
  // Sum g over the result dims the operand was copied along: the new dims
  // and the expanded size-1 dims; then restore the operand's size-1 dims.
  clearCotangents(*this, out);
  if (!want(wanted, 0))
    return success();
  ArrayRef<int64_t> in = getInput().getType().getShape();
  ArrayRef<int64_t> res = getType().getShape();
  SmallVector<int64_t> summed = otherDims(res.size(), getDims());
  for (auto [i, d] : llvm::enumerate(getDims()))
    if (in[i] != res[d])
      summed.push_back(d);
  llvm::sort(summed);
  GradientBuilder gb(b, loc);
  Value r = summed.empty() ? g : gb.reduceSum(g, summed);
  if (r.getType() != getInput().getType())
    r = ReshapeOp::create(b, loc, getInput().getType(), r);
  out[0] = r;
  return success();
}

//===----------------------------------------------------------------------===//
// Cost: no arithmetic (the simulator prices data movement as collectives,
// and a local copy as free)
//===----------------------------------------------------------------------===//

double TransposeOp::getFlops(ArrayRef<double>) { return 0; }
double ReshapeOp::getFlops(ArrayRef<double>) { return 0; }
double BroadcastInDimOp::getFlops(ArrayRef<double>) { return 0; }

//===----------------------------------------------------------------------===//
// Builders
//===----------------------------------------------------------------------===//

Value shardc::buildReshape(OpBuilder &b, Location loc, Type type,
                           Value input) {
  return ReshapeOp::create(b, loc, type, input);
}

Value shardc::buildBroadcastInDim(OpBuilder &b, Location loc, Type type,
                                  Value input, ArrayRef<int64_t> dims) {
  return BroadcastInDimOp::create(b, loc, type, input,
                                  b.getDenseI64ArrayAttr(dims));
}

Value shardc::buildTranspose(OpBuilder &b, Location loc, Value input,
                             ArrayRef<int64_t> perm) {
  return TransposeOp::create(b, loc, input, b.getDenseI64ArrayAttr(perm));
}

//===----------------------------------------------------------------------===//
// Queries (TensorOpQueries.h)
//===----------------------------------------------------------------------===//

std::optional<ArrayRef<int64_t>> shardc::getBroadcastDims(Operation *op) {
  if (auto broadcast = dyn_cast_or_null<BroadcastInDimOp>(op))
    return broadcast.getDims();
  return std::nullopt;
}
