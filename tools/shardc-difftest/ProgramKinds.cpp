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

namespace {

/// The program's body: ops drawn on the pool until it holds `target` of
/// them, with the collective of a GlobalCollective case among them (last
/// if the body fills up first).
void drawBody(ProgramBuilder &pb, GeneratedCase &out) {
  DiffRng &rng = pb.rng;
  int64_t target = 2 + rng.uniform(13);
  int64_t collectiveAt =
      out.kind == ProgramKind::GlobalCollective ? rng.uniform(target) : -1;
  auto placeCollective = [&](Value x) {
    if (Value v = pb.buildCollective(x)) {
      out.collectiveName = getNameFromLoc(v.getDefiningOp()->getLoc()).str();
      collectiveAt = -1;
    }
  };
  for (int attempts = 0; pb.numOps < target && attempts < 300; ++attempts) {
    Value x = pb.pickOperand();
    if (collectiveAt >= 0 && pb.numOps >= collectiveAt)
      placeCollective(x);
    else
      pb.buildRandomOp(x);
  }
  for (int attempts = 0; attempts < 50 && collectiveAt >= 0; ++attempts)
    placeCollective(pb.pickOperand());
}

/// Outputs: the newest value (a training step's loss is made of it),
/// sometimes another one, sometimes one value twice (each result may want
/// it in another layout).
SmallVector<Value> drawOutputs(ProgramBuilder &pb, ProgramKind kind) {
  DiffRng &rng = pb.rng;
  SmallVector<Value> outs;
  if (kind == ProgramKind::TrainStep)
    outs.push_back(pb.buildLoss(pb.pool.back()));
  else
    outs.push_back(pb.pool.back());
  if (rng.chance(0.5))
    outs.push_back(pb.pool[rng.uniform(pb.pool.size())]);
  if (rng.chance(0.15))
    outs.push_back(outs[rng.uniform(outs.size())]);
  return outs;
}

/// Returns `outs` from `func` and gives it its signature and attributes.
/// A partial result is returned as per-device summands (the partitioner
/// makes a pending sum when the value has none).
void finishSignature(ProgramBuilder &pb, func::FuncOp func,
                     ArrayRef<Value> outs) {
  OpBuilder &b = pb.b;
  func::ReturnOp::create(b, UnknownLoc::get(&pb.ctx), outs);
  SmallVector<Type> argTypes(pb.body->getArgumentTypes());
  SmallVector<Type> resTypes;
  for (Value v : outs)
    resTypes.push_back(v.getType());
  func.setType(b.getFunctionType(argTypes, resTypes));
  for (auto [i, attrs] : llvm::enumerate(pb.argAttrs))
    func.setArgAttrs(i, attrs);
  for (auto [i, v] : llvm::enumerate(outs))
    if (pb.rng.chance(0.5))
      func.setResultAttr(i, ShardcDialect::getShardingAttrName(),
                         pb.randomSharding(pb.tensorOf(v).getShape(), true));
}

/// What to differentiate: parameters (shardc.param), named arguments, or
/// (no choice) all. A training step needs at least one parameter.
void drawDifferentiated(ProgramBuilder &pb, func::FuncOp func,
                        GeneratedCase &out) {
  DiffRng &rng = pb.rng;
  unsigned numArgs = func.getNumArguments();
  if (out.kind == ProgramKind::TrainStep ||
      (out.kind == ProgramKind::Autodiff && rng.chance(0.5))) {
    unsigned forced = rng.uniform(numArgs);
    for (unsigned i = 0; i < numArgs; ++i)
      if (i == forced || rng.chance(0.5))
        func.setArgAttr(i, ShardcDialect::getParamAttrName(),
                        pb.b.getUnitAttr());
  } else if (out.kind == ProgramKind::Autodiff && rng.chance(0.5)) {
    unsigned forced = rng.uniform(numArgs);
    for (unsigned i = 0; i < numArgs; ++i)
      if (i == forced || rng.chance(0.4))
        out.wrt.push_back(
            func.getArgAttrOfType<StringAttr>(i,
                                              ShardcDialect::getNameAttrName())
                .str());
  }
}

/// The optimizer of a training step: SGD or Adam, a learning rate, and
/// ZeRO (the optimizer state and the update split over some axes).
TrainStepSpec drawTrainStep(ProgramBuilder &pb) {
  DiffRng &rng = pb.rng;
  TrainStepSpec train;
  train.adam = rng.chance(0.5);
  train.learningRate = rng.chance(0.5) ? 0.05f : 0.001f;
  if (rng.chance(0.5))
    for (StringRef axis : pb.axisNames)
      if (rng.chance(0.5))
        train.zeroAxes.push_back(axis.str());
  return train;
}

} // namespace

GeneratedCase shardc::generateCase(MLIRContext &ctx, DiffRng &rng,
                                   const GeneratorOptions &options) {
  GeneratedCase out;
  out.kind = drawKind(rng);
  ProgramBuilder pb(ctx, rng, options);
  pb.differentiated =
      out.kind == ProgramKind::Autodiff || out.kind == ProgramKind::TrainStep;
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
  drawBody(pb, out);
  SmallVector<Value> outs = drawOutputs(pb, out.kind);
  finishSignature(pb, func, outs);
  drawDifferentiated(pb, func, out);
  if (out.kind == ProgramKind::TrainStep)
    out.train = drawTrainStep(pb);

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
