//===- ProgramKinds.cpp - forward, backward, training-step programs -------===//
//
// One random program body serves every kind: the kind decides how the
// body's results are used (a scalar loss for a training step), which
// arguments are differentiated, and whether a collective is slipped in
// (a global program with one is invalid, and must be rejected cleanly).
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::difftest;

StringRef shardc::stringifyProgramKind(ProgramKind kind) {
  switch (kind) {
  case ProgramKind::Forward:
    return "forward";
  case ProgramKind::Autodiff:
    return "autodiff";
  case ProgramKind::TrainStep:
    return "train-step";
  case ProgramKind::GlobalCollective:
    return "global-collective";
  }
  return "?";
}

namespace {

ProgramKind drawKind(DiffRng &rng) {
  int64_t k = rng.uniform(100);
  if (k < 68)
    return ProgramKind::Forward;
  if (k < 82)
    return ProgramKind::Autodiff;
  if (k < 96)
    return ProgramKind::TrainStep;
  return ProgramKind::GlobalCollective;
}

/// Input ranks: mostly matrices and batches of them, sometimes scalars and
/// rank 4 or 5.
int64_t drawRank(DiffRng &rng) {
  static const int64_t ranks[] = {0, 1, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4, 5};
  return ranks[rng.uniform(std::size(ranks))];
}

} // namespace

Value ProgramBuilder::buildCollective(Value x) {
  ArrayRef<int64_t> shape = tensorOf(x).getShape();
  int64_t rank = shape.size();
  SmallVector<int64_t> order = randomPermutation(axisNames.size());
  SmallVector<Attribute> axes;
  int64_t n = 1;
  for (int64_t k = 0, e = 1 + rng.uniform(order.size()); k < e; ++k) {
    axes.push_back(b.getStringAttr(axisNames[order[k]]));
    n *= axisSizes[order[k]];
  }
  ArrayAttr axesAttr = b.getArrayAttr(axes);
  Location loc = freshLoc();
  SmallVector<int64_t> res(shape);
  ValueInfo r = info(x);
  r.exact = false;
  auto dimDivisible = [&]() -> int64_t {
    SmallVector<int64_t> ok;
    for (int64_t d = 0; d < rank; ++d)
      if (shape[d] % n == 0)
        ok.push_back(d);
    return ok.empty() ? -1 : ok[rng.uniform(ok.size())];
  };
  Operation *op = nullptr;
  switch (rng.uniform(6)) {
  case 0:
    op = AllReduceOp::create(
        b, loc, x.getType(), x, meshRef, axesAttr,
        ReductionKindAttr::get(&ctx, rng.chance(0.5) ? ReductionKind::Sum
                                                     : ReductionKind::Max));
    break;
  case 1: {
    if (rank == 0)
      return nullptr;
    int64_t d = rng.uniform(rank);
    res[d] *= n;
    if (numElements(res) > kMaxElements)
      return nullptr;
    op = AllGatherOp::create(b, loc, makeType(res), x, meshRef, axesAttr,
                             b.getI64IntegerAttr(d));
    break;
  }
  case 2:
  case 3: {
    int64_t d = dimDivisible();
    if (d < 0)
      return nullptr;
    res[d] /= n;
    if (rng.chance(0.5))
      op = AllSliceOp::create(b, loc, makeType(res), x, meshRef, axesAttr,
                              b.getI64IntegerAttr(d));
    else
      op = ReduceScatterOp::create(
          b, loc, makeType(res), x, meshRef, axesAttr, b.getI64IntegerAttr(d),
          ReductionKindAttr::get(&ctx, ReductionKind::Sum));
    break;
  }
  case 4: {
    int64_t s = dimDivisible();
    if (s < 0 || rank < 2)
      return nullptr;
    int64_t c = rng.uniform(rank - 1);
    if (c >= s)
      ++c;
    res[s] /= n;
    res[c] *= n;
    op = AllToAllOp::create(b, loc, makeType(res), x, meshRef, axesAttr,
                            b.getI64IntegerAttr(s), b.getI64IntegerAttr(c));
    break;
  }
  default: {
    SmallVector<int64_t> targets = randomPermutation(n);
    SmallVector<Attribute> pairs;
    for (int64_t s = 0; s < n; ++s)
      if (rng.chance(0.8))
        pairs.push_back(b.getArrayAttr({b.getI64IntegerAttr(s),
                                        b.getI64IntegerAttr(targets[s])}));
    op = CollectivePermuteOp::create(b, loc, x.getType(), x, meshRef, axesAttr,
                                     b.getArrayAttr(pairs));
    break;
  }
  }
  return record(op->getResult(0), r);
}

Value ProgramBuilder::buildLoss(Value v) {
  ValueInfo vi = info(v);
  if (vi.scale() * vi.scale() <= kMaxScale && rng.chance(0.5)) {
    ValueInfo sq = vi;
    sq.lo = 0;
    sq.hi = vi.scale() * vi.scale();
    sq.exact = vi.exact;
    v = record(MulOp::create(b, freshLoc(), v, v), sq);
  }
  RankedTensorType type = tensorOf(v);
  if (type.getRank() == 0)
    return v;
  ValueInfo sum = info(v);
  double n = type.getNumElements();
  sum.lo = std::min(sum.lo * n, sum.lo);
  sum.hi = std::max(sum.hi * n, sum.hi);
  sum.exact = false;
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return record(
      ReduceSumOp::create(b, freshLoc(), makeType({}), v, all), sum);
}

GeneratedCase shardc::generateCase(MLIRContext &ctx, DiffRng &rng,
                                   const GeneratorOptions &options) {
  GeneratedCase out;
  out.kind = drawKind(rng);
  ProgramBuilder pb(ctx, rng, options);
  pb.differentiated = out.kind == ProgramKind::Autodiff ||
                      out.kind == ProgramKind::TrainStep;
  // Forward bounds do not bound a backward pass: the gradient of a product
  // of a huge and a tiny value is the other huge value times a huge
  // cotangent. Extreme magnitudes stay in programs that are not
  // differentiated.
  pb.extremeMagnitudes = !pb.differentiated && rng.chance(0.15);
  pb.uneven = rng.chance(options.unevenFraction);
  pb.drawMesh();

  OpBuilder &b = pb.b;
  auto func = func::FuncOp::create(b, UnknownLoc::get(&ctx), "main",
                                   b.getFunctionType({}, {}));
  pb.body = func.addEntryBlock();
  b.setInsertionPointToEnd(pb.body);

  for (int64_t i = 0, e = 1 + rng.uniform(3); i < e; ++i) {
    int64_t rank = drawRank(rng);
    pb.addInput(pb.randomShape(rank, rank));
  }

  int64_t target = 2 + rng.uniform(13);
  int64_t collectiveAt =
      out.kind == ProgramKind::GlobalCollective ? rng.uniform(target) : -1;
  for (int attempts = 0; pb.numOps < target && attempts < 300; ++attempts) {
    Value x = pb.pickOperand();
    Value v;
    if (collectiveAt >= 0 && pb.numOps >= collectiveAt) {
      if ((v = pb.buildCollective(x))) {
        out.collectiveName = getNameFromLoc(v.getDefiningOp()->getLoc()).str();
        collectiveAt = -1;
      }
      continue;
    }
    pb.buildRandomOp(x);
  }
  if (collectiveAt >= 0) {
    // The body filled up first: the collective goes last.
    for (int attempts = 0; attempts < 50 && out.collectiveName.empty();
         ++attempts)
      if (Value v = pb.buildCollective(pb.pickOperand()))
        out.collectiveName = getNameFromLoc(v.getDefiningOp()->getLoc()).str();
  }

  // Outputs: the newest value (a training step's loss is made of it),
  // sometimes another one, sometimes one value twice (each result may want
  // it in another layout).
  SmallVector<Value> outs;
  if (out.kind == ProgramKind::TrainStep)
    outs.push_back(pb.buildLoss(pb.pool.back()));
  else
    outs.push_back(pb.pool.back());
  if (rng.chance(0.5))
    outs.push_back(pb.pool[rng.uniform(pb.pool.size())]);
  if (rng.chance(0.15))
    outs.push_back(outs[rng.uniform(outs.size())]);
  func::ReturnOp::create(b, UnknownLoc::get(&ctx), outs);

  SmallVector<Type> argTypes(pb.body->getArgumentTypes());
  SmallVector<Type> resTypes;
  for (Value v : outs)
    resTypes.push_back(v.getType());
  func.setType(b.getFunctionType(argTypes, resTypes));
  for (auto [i, attrs] : llvm::enumerate(pb.argAttrs))
    func.setArgAttrs(i, attrs);
  // A partial result is returned as per-device summands (the partitioner
  // makes a pending sum when the value has none).
  for (auto [i, v] : llvm::enumerate(outs))
    if (rng.chance(0.5))
      func.setResultAttr(i, ShardcDialect::getShardingAttrName(),
                         pb.randomSharding(pb.tensorOf(v).getShape(), true));

  // What to differentiate: parameters (shardc.param), named arguments, or
  // (no choice) all. A training step needs at least one parameter.
  unsigned numArgs = func.getNumArguments();
  if (out.kind == ProgramKind::TrainStep ||
      (out.kind == ProgramKind::Autodiff && rng.chance(0.5))) {
    unsigned forced = rng.uniform(numArgs);
    for (unsigned i = 0; i < numArgs; ++i)
      if (i == forced || rng.chance(0.5))
        func.setArgAttr(i, ShardcDialect::getParamAttrName(), b.getUnitAttr());
  } else if (out.kind == ProgramKind::Autodiff && rng.chance(0.5)) {
    unsigned forced = rng.uniform(numArgs);
    for (unsigned i = 0; i < numArgs; ++i)
      if (i == forced || rng.chance(0.4))
        out.wrt.push_back(
            func.getArgAttrOfType<StringAttr>(i,
                                              ShardcDialect::getNameAttrName())
                .str());
  }
  if (out.kind == ProgramKind::TrainStep) {
    out.train.adam = rng.chance(0.5);
    out.train.learningRate = rng.chance(0.5) ? 0.05f : 0.001f;
    // ZeRO: the optimizer state (and the update) split over some axes.
    if (rng.chance(0.5))
      for (StringRef axis : pb.axisNames)
        if (rng.chance(0.5))
          out.train.zeroAxes.push_back(axis.str());
  }

  out.module = std::move(pb.module);
  out.domains = std::move(pb.domains);
  out.numOps = pb.numOps;
  out.unevenShardings = pb.unevenShardings;
  if (out.kind == ProgramKind::Forward)
    for (Value v : outs)
      out.outputBounds.push_back(pb.info(v).scale());
  out.threads = rng.chance(options.threadsFraction);
  return out;
}
