//===- Generator.cpp - random shardc programs for difftest ----------------===//
//
// Shapes are built from dims in {8, 16, 24, 32} so that any sharding whose
// axes multiply to at most 8 (the largest mesh) is even on an input; ops
// that change shapes (reshape, broadcast, dot products) may create smaller
// dims, and every random sharding is checked for divisibility against the
// actual shape, so annotations are always valid.
//
//===----------------------------------------------------------------------===//

#include "Generator.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Support/RandomTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

uint64_t shardc::DiffRng::next() {
  state += 0x9e3779b97f4a7c15ULL;
  return splitmix64Mix(state);
}

namespace {
using shardc::DiffRng;

constexpr int64_t kMaxArgs = 6;
constexpr int64_t kMaxDim = 256;

class Generator {
public:
  Generator(MLIRContext &ctx, DiffRng &rng) : ctx(ctx), rng(rng), b(&ctx) {}
  OwningOpRef<ModuleOp> run(int &numOps);

private:
  MLIRContext &ctx;
  DiffRng &rng;
  OpBuilder b;
  Block *body = nullptr;
  FlatSymbolRefAttr meshRef;
  SmallVector<std::string> axisNames;
  SmallVector<int64_t> axisSizes;
  SmallVector<Value> pool;           // every value ops may consume
  SmallVector<DictionaryAttr> argAttrs;
  int nextName = 0;

  Location freshLoc() {
    return NameLoc::get(StringAttr::get(&ctx, "v" + Twine(nextName++)));
  }
  static RankedTensorType tensorOf(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  RankedTensorType makeType(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }
  int64_t randomDim() { return 8 * (1 + rng.uniform(4)); }

  shardc::ShardingAttr randomSharding(ArrayRef<int64_t> shape,
                                      bool allowPartial);
  Value addInput(ArrayRef<int64_t> shape);
  Value sameTypedPartner(Value v);
  Value pickOperand();
  /// Builds one random op (or a short fixed pair); null if the chosen kind
  /// does not apply to the operand, and the caller tries again.
  Value buildRandomOp(Value x);
  // No partial axes on op results: a pending sum is not computable for
  // nonlinear ops, and the compiler rightly rejects such a request.
  void maybeAnnotate(Value v) {
    if (Operation *op = v.getDefiningOp(); op && rng.chance(0.15))
      op->setAttr(shardc::ShardcDialect::getShardingAttrName(),
                  randomSharding(tensorOf(v).getShape(), false));
  }
};
} // namespace

shardc::ShardingAttr Generator::randomSharding(ArrayRef<int64_t> shape,
                                               bool allowPartial) {
  // Each axis is used at most once: visit them in random order and give
  // each to a random dim (only if that keeps the dim evenly divisible), to
  // the partial set, or to nothing.
  SmallVector<SmallVector<StringRef>> dims(shape.size());
  SmallVector<int64_t> products(shape.size(), 1);
  SmallVector<StringRef> partial;
  SmallVector<unsigned> order;
  for (unsigned i = 0; i < axisNames.size(); ++i)
    order.push_back(i);
  for (unsigned i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[rng.uniform(i)]);
  for (unsigned a : order) {
    if (!shape.empty() && rng.chance(0.6)) {
      int64_t d = rng.uniform(shape.size());
      if (shape[d] % (products[d] * axisSizes[a]) == 0) {
        products[d] *= axisSizes[a];
        dims[d].push_back(axisNames[a]);
      }
    } else if (allowPartial && rng.chance(0.1)) {
      partial.push_back(axisNames[a]);
    }
  }
  return shardc::ShardingAttr::get(&ctx, meshRef, dims, partial);
}

Value Generator::addInput(ArrayRef<int64_t> shape) {
  Value arg = body->addArgument(makeType(shape), freshLoc());
  std::string name =
      "in" + std::to_string(cast<BlockArgument>(arg).getArgNumber());
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr(shardc::ShardcDialect::getNameAttrName(),
                     b.getStringAttr(name))};
  // Inputs never get partial axes: a partial input's per-device data would
  // have to be invented, and extractDeviceBlock gives every device the
  // whole value.
  if (rng.chance(0.5))
    attrs.push_back(b.getNamedAttr(shardc::ShardcDialect::getShardingAttrName(),
                                   randomSharding(shape, false)));
  argAttrs.push_back(b.getDictionaryAttr(attrs));
  pool.push_back(arg);
  return arg;
}

Value Generator::sameTypedPartner(Value v) {
  SmallVector<Value> same;
  for (Value p : pool)
    if (p.getType() == v.getType())
      same.push_back(p);
  int64_t choice = rng.uniform(3);
  if (choice == 0 && same.size() > 1)
    return same[rng.uniform(same.size())];
  if (choice == 1 && (int64_t)argAttrs.size() < kMaxArgs)
    return addInput(tensorOf(v).getShape());
  // A small constant: exercises constants being sliced per device.
  RankedTensorType type = tensorOf(v);
  SmallVector<float> values(type.getNumElements());
  bool splat = rng.chance(0.3);
  float first = 0.5f * shardc::bitsToUniformFloat(rng.next());
  for (float &f : values)
    f = splat ? first : 0.5f * shardc::bitsToUniformFloat(rng.next());
  auto attr = DenseElementsAttr::get(type, ArrayRef<float>(values));
  Value c = shardc::ConstantOp::create(b, freshLoc(), cast<ElementsAttr>(attr));
  pool.push_back(c);
  return c;
}

Value Generator::pickOperand() {
  // Mostly extend the chain from the newest value; sometimes reach back to
  // make a DAG (values used twice, in different shardings).
  if (rng.chance(0.7))
    return pool.back();
  return pool[rng.uniform(pool.size())];
}

Value Generator::buildRandomOp(Value x) {
  RankedTensorType t = tensorOf(x);
  SmallVector<int64_t> shape(t.getShape());
  int64_t rank = shape.size();
  switch (rng.uniform(11)) {
  case 0: { // matmul [b.., m, k] x [b.., k, n]
    if (rank < 2 || (int64_t)argAttrs.size() >= kMaxArgs)
      return nullptr;
    SmallVector<int64_t> rhs(shape);
    rhs[rank - 2] = shape[rank - 1];
    rhs[rank - 1] = randomDim();
    Value w = addInput(rhs);
    SmallVector<int64_t> res(shape);
    res[rank - 1] = rhs[rank - 1];
    return shardc::MatmulOp::create(b, freshLoc(), makeType(res), x, w);
  }
  case 1: { // dot_general with one batch and one contracting dim
    if (rank < 2 || (int64_t)argAttrs.size() >= kMaxArgs)
      return nullptr;
    int64_t bd = rng.uniform(rank), cd = rng.uniform(rank - 1);
    if (cd >= bd)
      ++cd;
    // rhs holds batch, contracting and maybe one free dim, in random order.
    SmallVector<int64_t> rhsDims = {shape[bd], shape[cd]};
    if (rng.chance(0.6))
      rhsDims.push_back(randomDim());
    SmallVector<int64_t> perm;
    for (unsigned i = 0; i < rhsDims.size(); ++i)
      perm.push_back(i);
    for (unsigned i = perm.size(); i > 1; --i)
      std::swap(perm[i - 1], perm[rng.uniform(i)]);
    SmallVector<int64_t> rhsShape(rhsDims.size());
    int64_t rbd = 0, rcd = 0;
    for (unsigned i = 0; i < perm.size(); ++i) {
      rhsShape[i] = rhsDims[perm[i]];
      if (perm[i] == 0)
        rbd = i;
      if (perm[i] == 1)
        rcd = i;
    }
    Value w = addInput(rhsShape);
    SmallVector<int64_t> res = {shape[bd]};
    for (int64_t i = 0; i < rank; ++i)
      if (i != bd && i != cd)
        res.push_back(shape[i]);
    if (rhsDims.size() == 3)
      res.push_back(rhsDims[2]);
    return shardc::DotGeneralOp::create(b, 
        freshLoc(), makeType(res), x, w, ArrayRef<int64_t>{bd},
        ArrayRef<int64_t>{rbd}, ArrayRef<int64_t>{cd}, ArrayRef<int64_t>{rcd});
  }
  case 2:
  case 3: { // unary
    Location loc = freshLoc();
    switch (rng.uniform(6)) {
    case 0:
      return shardc::ReluOp::create(b, loc, x);
    case 1:
      return shardc::TanhOp::create(b, loc, x);
    case 2:
      return shardc::NegOp::create(b, loc, x);
    case 3:
      return shardc::SigmoidOp::create(b, loc, x);
    case 4:
      return shardc::GeluOp::create(b, loc, x);
    default: {
      // exp only of bounded values (tanh in [-1, 1]), so it cannot overflow
      // and the tolerance stays meaningful.
      Value bounded = shardc::TanhOp::create(b, loc, x);
      pool.push_back(bounded);
      return shardc::ExpOp::create(b, freshLoc(), bounded);
    }
    }
  }
  case 4: { // binary on same-shaped values
    Value y = sameTypedPartner(x);
    Location loc = freshLoc();
    if (rng.chance(0.5))
      std::swap(x, y);
    switch (rng.uniform(4)) {
    case 0:
      return shardc::AddOp::create(b, loc, x, y);
    case 1:
      return shardc::SubOp::create(b, loc, x, y);
    case 2:
      return shardc::MulOp::create(b, loc, x, y);
    default:
      return shardc::MaxOp::create(b, loc, x, y);
    }
  }
  case 5: { // reduce over one dim
    if (rank < 1)
      return nullptr;
    int64_t d = rng.uniform(rank);
    SmallVector<int64_t> res(shape);
    res.erase(res.begin() + d);
    if (rng.chance(0.5))
      return shardc::ReduceSumOp::create(b, freshLoc(), makeType(res), x,
                                           ArrayRef<int64_t>{d});
    return shardc::ReduceMaxOp::create(b, freshLoc(), makeType(res), x,
                                         ArrayRef<int64_t>{d});
  }
  case 6: { // transpose
    if (rank < 2)
      return nullptr;
    SmallVector<int64_t> perm, res;
    for (int64_t i = 0; i < rank; ++i)
      perm.push_back(i);
    for (int64_t i = rank; i > 1; --i)
      std::swap(perm[i - 1], perm[rng.uniform(i)]);
    for (int64_t p : perm)
      res.push_back(shape[p]);
    return shardc::TransposeOp::create(b, freshLoc(), makeType(res), x, perm);
  }
  case 7: { // reshape: merge two adjacent dims, or split one
    SmallVector<int64_t> res(shape);
    if (rank >= 2 && rng.chance(0.5)) {
      int64_t d = rng.uniform(rank - 1);
      if (shape[d] * shape[d + 1] > kMaxDim)
        return nullptr;
      res[d] = shape[d] * shape[d + 1];
      res.erase(res.begin() + d + 1);
    } else {
      if (rank < 1 || rank >= 3)
        return nullptr;
      int64_t d = rng.uniform(rank);
      int64_t f = rng.pick<int64_t>({2, 4, 8});
      if (shape[d] % f != 0 || shape[d] == f)
        return nullptr;
      res[d] = f;
      res.insert(res.begin() + d + 1, shape[d] / f);
    }
    return shardc::ReshapeOp::create(b, freshLoc(), makeType(res), x);
  }
  case 8: { // broadcast_in_dim: one new dim at a random position
    if (rank >= 3)
      return nullptr;
    int64_t at = rng.uniform(rank + 1);
    SmallVector<int64_t> res(shape), dims;
    res.insert(res.begin() + at, rng.pick<int64_t>({2, 4, 8}));
    for (int64_t i = 0; i <= rank; ++i)
      if (i != at)
        dims.push_back(i);
    return shardc::BroadcastInDimOp::create(b, freshLoc(), makeType(res), x,
                                              dims);
  }
  case 9: // sharding_constraint (no partial: a constraint pins a layout)
    return shardc::ShardingConstraintOp::create(b, 
        freshLoc(), x, randomSharding(shape, false));
  default: { // constant combined with x, so it is used
    Value c = sameTypedPartner(x);
    return shardc::AddOp::create(b, freshLoc(), x, c);
  }
  }
}

OwningOpRef<ModuleOp> Generator::run(int &numOps) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx));
  b.setInsertionPointToEnd(module->getBody());

  // Mesh: 1-3 axes of size 1, 2 or 4, at most 8 devices.
  static const char *names[] = {"x", "y", "z"};
  int64_t numAxes = 1 + rng.uniform(3);
  int64_t devices = 1;
  for (int64_t i = 0; i < numAxes; ++i) {
    int64_t size = rng.pick<int64_t>({1, 2, 4});
    if (devices * size > 8)
      size = 8 / devices >= 2 ? 2 : 1;
    devices *= size;
    axisNames.push_back(names[i]);
    axisSizes.push_back(size);
  }
  SmallVector<StringRef> axisRefs(axisNames.begin(), axisNames.end());
  shardc::MeshOp::create(b, UnknownLoc::get(&ctx), "mesh",
                           b.getStrArrayAttr(axisRefs), axisSizes);
  meshRef = FlatSymbolRefAttr::get(&ctx, "mesh");

  auto func = func::FuncOp::create(b, UnknownLoc::get(&ctx), "main",
                                     b.getFunctionType({}, {}));
  body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);

  int64_t numInputs = 1 + rng.uniform(3);
  for (int64_t i = 0; i < numInputs; ++i) {
    SmallVector<int64_t> shape;
    for (int64_t r = 0, rank = 1 + rng.uniform(3); r < rank; ++r)
      shape.push_back(randomDim());
    addInput(shape);
  }

  int64_t target = 2 + rng.uniform(11);
  numOps = 0;
  for (int attempts = 0; numOps < target && attempts < 200; ++attempts) {
    Value v = buildRandomOp(pickOperand());
    if (!v)
      continue;
    maybeAnnotate(v);
    pool.push_back(v);
    ++numOps;
  }

  // Outputs: the newest value, and sometimes another one.
  SmallVector<Value> outs = {pool.back()};
  if (rng.chance(0.5)) {
    Value other = pool[rng.uniform(pool.size())];
    if (other != outs.front())
      outs.push_back(other);
  }
  func::ReturnOp::create(b, UnknownLoc::get(&ctx), outs);

  SmallVector<Type> argTypes(body->getArgumentTypes());
  SmallVector<Type> resTypes;
  for (Value v : outs)
    resTypes.push_back(v.getType());
  func.setType(b.getFunctionType(argTypes, resTypes));
  for (auto [i, attrs] : llvm::enumerate(argAttrs))
    func.setArgAttrs(i, attrs);
  // No partial outputs either: the partitioner cannot make a value partial
  // (it says so), and propagating a partial output backwards makes ops
  // uncomputable; both are known limitations, not bugs to rediscover.
  for (auto [i, v] : llvm::enumerate(outs))
    if (rng.chance(0.5))
      func.setResultAttr(i, shardc::ShardcDialect::getShardingAttrName(),
                         randomSharding(tensorOf(v).getShape(), false));
  return module;
}

OwningOpRef<ModuleOp> shardc::generateModule(MLIRContext &ctx, DiffRng &rng,
                                             int &numOps) {
  return Generator(ctx, rng).run(numOps);
}
