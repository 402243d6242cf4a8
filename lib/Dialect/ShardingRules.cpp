//===- ShardingRules.cpp - the sharding rule of every tensor op -----------===//
//
// The factor-form rules (see ShardingRule.h) of the tensor ops. A rule is
// built from types and attributes the op's verifier has already checked; the
// builders still avoid indexing out of range, because a bad rule must become
// a diagnostic in its user (ShardingRule::matchesOp), never a crash.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardingRule.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace shardc;

#include "shardc/Dialect/ShardingRuleInterface.cpp.inc"

//===----------------------------------------------------------------------===//
// ShardingRule
//===----------------------------------------------------------------------===//

StringRef shardc::stringifyFactorKind(FactorKind kind) {
  switch (kind) {
  case FactorKind::Parallel:
    return "parallel";
  case FactorKind::Reduction:
    return "reduction";
  case FactorKind::NeedReplication:
    return "need_replication";
  }
  return "unknown";
}

int64_t ShardingRule::addFactor(int64_t size, FactorKind kind) {
  factors.push_back({size, kind});
  return static_cast<int64_t>(factors.size()) - 1;
}

void ShardingRule::addOperand(TensorFactors dims) {
  // Operands stay in front of results even if added late.
  tensors.insert(tensors.begin() + numOperands, std::move(dims));
  ++numOperands;
}

void ShardingRule::addResult(TensorFactors dims) {
  tensors.push_back(std::move(dims));
}

int64_t ShardingRule::getDimSize(unsigned t, unsigned d) const {
  int64_t size = 1;
  for (int64_t f : tensors[t][d])
    size *= factors[f].size;
  return size;
}

int64_t ShardingRule::getTensorNumElements(unsigned t) const {
  int64_t n = 1;
  for (unsigned d = 0, e = tensors[t].size(); d < e; ++d)
    n *= getDimSize(t, d);
  return n;
}

bool ShardingRule::matchesShapes(ArrayRef<ArrayRef<int64_t>> shapes,
                                 std::string &why) const {
  llvm::raw_string_ostream os(why);
  if (shapes.size() != tensors.size()) {
    os << "rule has " << tensors.size() << " tensors, op has " << shapes.size();
    return false;
  }
  for (const Factor &f : factors)
    if (f.size < 0) {
      os << "negative factor size " << f.size;
      return false;
    }
  for (auto [t, shape] : llvm::enumerate(shapes)) {
    if (shape.size() != tensors[t].size()) {
      os << "tensor #" << t << " has rank " << shape.size() << ", rule has "
         << tensors[t].size() << " dims";
      return false;
    }
    for (auto [d, dimFactors] : llvm::enumerate(tensors[t])) {
      for (int64_t f : dimFactors)
        if (f < 0 || f >= getNumFactors()) {
          os << "tensor #" << t << " dim " << d << " names factor " << f;
          return false;
        }
      if (getDimSize(t, d) != shape[d]) {
        os << "tensor #" << t << " dim " << d << " has size " << shape[d]
           << ", its factors make " << getDimSize(t, d);
        return false;
      }
    }
  }
  return true;
}

bool ShardingRule::matchesOp(Operation *op, std::string &why) const {
  SmallVector<ArrayRef<int64_t>> shapes;
  auto add = [&](Type type) {
    if (auto shaped = dyn_cast<ShapedType>(type); shaped && shaped.hasRank())
      shapes.push_back(shaped.getShape());
    else
      shapes.push_back({});
  };
  for (Type t : op->getOperandTypes())
    add(t);
  for (Type t : op->getResultTypes())
    add(t);
  return matchesShapes(shapes, why);
}

void ShardingRule::print(raw_ostream &os) const {
  auto printTensors = [&](unsigned begin, unsigned end) {
    os << "(";
    for (unsigned t = begin; t < end; ++t) {
      if (t != begin)
        os << ", ";
      os << "[";
      llvm::interleaveComma(tensors[t], os, [&](const DimFactors &dim) {
        if (dim.size() != 1)
          os << "(";
        llvm::interleave(
            dim, os, [&](int64_t f) { os << "f" << f; }, " ");
        if (dim.size() != 1)
          os << ")";
      });
      os << "]";
    }
    os << ")";
  };
  printTensors(0, numOperands);
  os << " -> ";
  printTensors(numOperands, tensors.size());
  os << " {";
  llvm::interleaveComma(llvm::enumerate(factors), os, [&](auto it) {
    os << "f" << it.index() << "=" << it.value().size;
    if (it.value().kind != FactorKind::Parallel)
      os << " " << stringifyFactorKind(it.value().kind);
  });
  os << "}";
}

std::string ShardingRule::str() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  print(os);
  return out;
}

ShardingRule ShardingRule::getIdentity(ArrayRef<int64_t> shape,
                                       unsigned numOperands,
                                       unsigned numResults) {
  ShardingRule rule;
  TensorFactors dims;
  for (int64_t size : shape)
    dims.push_back({rule.addFactor(size, FactorKind::Parallel)});
  for (unsigned i = 0; i < numOperands; ++i)
    rule.addOperand(dims);
  for (unsigned i = 0; i < numResults; ++i)
    rule.addResult(dims);
  return rule;
}

//===----------------------------------------------------------------------===//
// Rule builders
//===----------------------------------------------------------------------===//

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

/// One fresh factor per dim of `shape`, all of `kind`.
static TensorFactors freshFactors(ShardingRule &rule, ArrayRef<int64_t> shape,
                                  FactorKind kind = FactorKind::Parallel) {
  TensorFactors dims;
  for (int64_t size : shape)
    dims.push_back({rule.addFactor(size, kind)});
  return dims;
}

static ShardingRule elementwiseRule(Operation *op) {
  return ShardingRule::getIdentity(shapeOf(op->getResult(0)),
                                   op->getNumOperands(), 1);
}

/// Contraction with explicit batch/contracting pairs; the result is batch,
/// then free lhs dims, then free rhs dims (dot_general's convention, which
/// matmul follows with batch = leading dims, contract = lhs[-1] x rhs[-2]).
static ShardingRule
contractionRule(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs,
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

/// `reducedKind` is the kind of the summed-away factors.
static ShardingRule reduceRule(Value input, ArrayRef<int64_t> reduced,
                               FactorKind reducedKind) {
  ShardingRule rule;
  ArrayRef<int64_t> shape = shapeOf(input);
  TensorFactors in, out;
  for (int64_t d = 0, e = shape.size(); d < e; ++d) {
    bool isReduced = llvm::is_contained(reduced, d);
    int64_t f = rule.addFactor(shape[d],
                               isReduced ? reducedKind : FactorKind::Parallel);
    in.push_back({f});
    if (!isReduced)
      out.push_back({f});
  }
  rule.addOperand(std::move(in));
  rule.addResult(std::move(out));
  return rule;
}

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

//===----------------------------------------------------------------------===//
// The ops
//===----------------------------------------------------------------------===//

#define SHARDC_ELEMENTWISE_RULE(OpClass)                                       \
  ShardingRule OpClass::getShardingRule() {                                    \
    return elementwiseRule(getOperation());                                    \
  }
SHARDC_ELEMENTWISE_RULE(ReluOp)
SHARDC_ELEMENTWISE_RULE(GeluOp)
SHARDC_ELEMENTWISE_RULE(ExpOp)
SHARDC_ELEMENTWISE_RULE(LogOp)
SHARDC_ELEMENTWISE_RULE(NegOp)
SHARDC_ELEMENTWISE_RULE(TanhOp)
SHARDC_ELEMENTWISE_RULE(SqrtOp)
SHARDC_ELEMENTWISE_RULE(RsqrtOp)
SHARDC_ELEMENTWISE_RULE(SigmoidOp)
SHARDC_ELEMENTWISE_RULE(StepOp)
SHARDC_ELEMENTWISE_RULE(AddOp)
SHARDC_ELEMENTWISE_RULE(SubOp)
SHARDC_ELEMENTWISE_RULE(MulOp)
SHARDC_ELEMENTWISE_RULE(DivOp)
SHARDC_ELEMENTWISE_RULE(MaxOp)
#undef SHARDC_ELEMENTWISE_RULE

// A sharding constraint moves no data in the global program: identity. (It
// pins its result's sharding, which propagation reads as an annotation.)
ShardingRule ShardingConstraintOp::getShardingRule() {
  return elementwiseRule(getOperation());
}

ShardingRule MatmulOp::getShardingRule() {
  ArrayRef<int64_t> lhs = shapeOf(getLhs()), rhs = shapeOf(getRhs());
  int64_t rank = lhs.size();
  SmallVector<int64_t> batch;
  for (int64_t d = 0; d + 2 < rank; ++d)
    batch.push_back(d);
  return contractionRule(lhs, rhs, batch, batch, {rank - 1}, {rank - 2});
}

ShardingRule DotGeneralOp::getShardingRule() {
  return contractionRule(shapeOf(getLhs()), shapeOf(getRhs()),
                         getLhsBatchDims(), getRhsBatchDims(),
                         getLhsContractingDims(), getRhsContractingDims());
}

ShardingRule ReduceSumOp::getShardingRule() {
  return reduceRule(getInput(), getDims(), FactorKind::Reduction);
}

// A sharded max reduction would leave a pending *max* over the axes, which
// `partial` (a pending sum) cannot say, so its reduced factors are never
// sharded: an operand sharded along them is gathered first.
ShardingRule ReduceMaxOp::getShardingRule() {
  return reduceRule(getInput(), getDims(), FactorKind::NeedReplication);
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

ShardingRule ConstantOp::getShardingRule() {
  ShardingRule rule;
  rule.addResult(freshFactors(rule, shapeOf(getResult())));
  return rule;
}
