//===- MeshDrawing.cpp - meshes, shapes, shardings and inputs -------------===//
//
// Meshes have 1 to 4 axes of sizes 1 to 5 (odd ones included) and up to 16
// devices. Dims are mostly products of axis sizes, so that most random
// shardings divide them. In a case drawing uneven dims, dims are also
// primes and sizes below the axis sizes, and shardings split dims their
// axes do not divide (padded, docs/sharding.md#uneven-dims); otherwise
// every sharding divides the actual shape.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "shardc/Support/RandomTensor.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::difftest;

uint64_t shardc::DiffRng::next() {
  state += 0x9e3779b97f4a7c15ULL;
  return splitmix64Mix(state);
}

int64_t shardc::difftest::numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

ProgramBuilder::ProgramBuilder(MLIRContext &ctx, DiffRng &rng,
                               const GeneratorOptions &options)
    : ctx(ctx), rng(rng), options(options), b(&ctx) {
  module = ModuleOp::create(UnknownLoc::get(&ctx));
  b.setInsertionPointToEnd(module->getBody());
}

void ProgramBuilder::drawMesh() {
  static const char *names[] = {"x", "y", "z", "w"};
  // Shapes seen in practice and the odd ones a power-of-two bias misses;
  // otherwise random axes.
  static const SmallVector<int64_t> presets[] = {
      {3}, {5}, {3, 2}, {2, 3}, {2, 2, 3}, {4, 4}, {2, 2, 2, 2}, {16}, {2, 8}};
  SmallVector<int64_t> sizes;
  if (rng.chance(0.3)) {
    sizes = presets[rng.uniform(std::size(presets))];
  } else {
    int64_t numAxes = 1 + rng.uniform(4), devices = 1;
    for (int64_t i = 0; i < numAxes; ++i) {
      SmallVector<int64_t> fits;
      for (int64_t s : {1, 2, 2, 2, 3, 4, 4, 5})
        if (devices * s <= 16)
          fits.push_back(s);
      int64_t size = rng.pick<int64_t>(fits);
      devices *= size;
      sizes.push_back(size);
    }
  }
  for (auto [i, size] : llvm::enumerate(sizes)) {
    axisNames.push_back(names[i]);
    axisSizes.push_back(size);
  }
  SmallVector<StringRef> axisRefs(axisNames.begin(), axisNames.end());
  MeshOp::create(b, UnknownLoc::get(&ctx), "mesh", b.getStrArrayAttr(axisRefs),
                 axisSizes);
  meshRef = FlatSymbolRefAttr::get(&ctx, "mesh");
}

int64_t ProgramBuilder::randomDim() {
  // Primes and sizes below an axis size: blocks with padding, and devices
  // holding nothing but padding.
  if (uneven && rng.chance(0.35))
    return rng.pick<int64_t>({1, 2, 3, 5, 7, 11, 13});
  if (rng.chance(0.25))
    return rng.pick<int64_t>({1, 2, 3, 4, 5, 6, 8, 12, 16});
  // A product of some axis sizes, perhaps doubled: divisible by them.
  int64_t d = rng.chance(0.5) ? 2 : 1;
  for (int64_t s : axisSizes)
    if (rng.chance(0.5) && d * s <= 32)
      d *= s;
  // Unit dims come from the list above, not by accident.
  return d > 1 ? d : rng.pick<int64_t>({2, 3, 4, 6, 8});
}

SmallVector<int64_t> ProgramBuilder::randomShape(int64_t minRank,
                                                 int64_t maxRank) {
  int64_t rank = minRank + rng.uniform(maxRank - minRank + 1);
  SmallVector<int64_t> shape;
  for (int64_t r = 0; r < rank; ++r) {
    int64_t d = randomDim();
    // Keep within the element budget; high ranks get small dims.
    while (d > 1 && numElements(shape) * d * (rank - r - 1 > 0 ? 2 : 1) >
                        kMaxElements)
      d = d % 2 == 0 ? d / 2 : 1;
    shape.push_back(d);
  }
  return shape;
}

SmallVector<int64_t> ProgramBuilder::randomPermutation(int64_t n) {
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < n; ++i)
    perm.push_back(i);
  for (int64_t i = n; i > 1; --i)
    std::swap(perm[i - 1], perm[rng.uniform(i)]);
  return perm;
}

ShardingAttr ProgramBuilder::randomSharding(ArrayRef<int64_t> shape,
                                            bool allowPartial) {
  // Each axis is used at most once: visit them in random order and give
  // each to a random dim (only if that keeps the dim evenly divisible), to
  // the partial set, or to nothing.
  SmallVector<SmallVector<StringRef>> dims(shape.size());
  SmallVector<int64_t> products(shape.size(), 1);
  SmallVector<StringRef> partial;
  for (int64_t a : randomPermutation(axisNames.size())) {
    if (!shape.empty() && rng.chance(0.6)) {
      int64_t d = rng.uniform(shape.size());
      if (uneven || shape[d] % (products[d] * axisSizes[a]) == 0) {
        products[d] *= axisSizes[a];
        dims[d].push_back(axisNames[a]);
      }
    } else if (allowPartial && rng.chance(0.15)) {
      partial.push_back(axisNames[a]);
    }
  }
  for (auto [d, product] : llvm::enumerate(products))
    if (shape[d] % product != 0) {
      ++unevenShardings;
      break;
    }
  return ShardingAttr::get(&ctx, meshRef, dims, partial);
}

Value ProgramBuilder::addInput(ArrayRef<int64_t> shape) {
  InputDomain domain = InputDomain::Uniform;
  if (options.nonFinite && rng.chance(0.3))
    domain = InputDomain::NonFinite;
  else if (extremeMagnitudes && rng.chance(0.5))
    domain = rng.chance(0.5) ? InputDomain::Huge : InputDomain::Tiny;
  else if (rng.chance(0.2))
    domain = InputDomain::Positive;
  return addInput(shape, domain);
}

Value ProgramBuilder::addInput(ArrayRef<int64_t> shape, InputDomain domain) {
  Value arg = body->addArgument(makeType(shape), freshLoc());
  std::string name =
      "in" + std::to_string(cast<BlockArgument>(arg).getArgNumber());
  SmallVector<NamedAttribute> attrs = {b.getNamedAttr(
      ShardcDialect::getNameAttrName(), b.getStringAttr(name))};
  // A partial input holds a summand of the value on every device of the
  // partial axes.
  ValueInfo info;
  if (rng.chance(0.5)) {
    ShardingAttr sharding = randomSharding(shape, true);
    info.mayBeSummed = sharding.isPartial();
    attrs.push_back(
        b.getNamedAttr(ShardcDialect::getShardingAttrName(), sharding));
  }
  argAttrs.push_back(b.getDictionaryAttr(attrs));
  domains.push_back(domain);
  switch (domain) {
  case InputDomain::Uniform:
    break;
  case InputDomain::Positive:
    info.lo = 0.25;
    info.hi = 2;
    break;
  case InputDomain::Huge:
    info.lo = -1e30;
    info.hi = 1e30;
    break;
  case InputDomain::Tiny:
    info.lo = -1e-30;
    info.hi = 1e-30;
    break;
  case InputDomain::NonFinite:
    info.nonFinite = true;
    break;
  }
  pool.push_back(arg);
  infos[arg] = info;
  return arg;
}

Value ProgramBuilder::record(Value v, const ValueInfo &info) {
  infos[v] = info;
  pool.push_back(v);
  ++numOps;
  // Sometimes pin the op's result; a partial set asks for a pending sum,
  // which the partitioner makes (keeping the value on one device of each
  // group) when the op does not produce one.
  if (Operation *op = v.getDefiningOp();
      op && !isa<ShardingConstraintOp>(op) && rng.chance(0.15))
    op->setAttr(ShardcDialect::getShardingAttrName(),
                randomSharding(tensorOf(v).getShape(), true));
  return v;
}

Value ProgramBuilder::pickOperand() {
  // Mostly extend the chain from the newest value; sometimes reach back to
  // make a DAG (values used twice, in different shardings).
  if (rng.chance(0.7))
    return pool.back();
  return pool[rng.uniform(pool.size())];
}

StringRef shardc::stringifyInputDomain(InputDomain domain) {
  switch (domain) {
  case InputDomain::Uniform:
    return "uniform";
  case InputDomain::Positive:
    return "positive";
  case InputDomain::Huge:
    return "huge";
  case InputDomain::Tiny:
    return "tiny";
  case InputDomain::NonFinite:
    return "non-finite";
  }
  return "?";
}

llvm::Expected<Tensor> shardc::fillInput(ArrayRef<int64_t> shape,
                                         InputDomain domain, uint64_t seed,
                                         StringRef name) {
  llvm::Expected<Tensor> t = tryRandomTensor(shape, seed, name);
  if (!t)
    return t.takeError();
  // Each map is exact or rounds once, identically everywhere.
  int64_t i = 0;
  for (float &v : t->values()) {
    switch (domain) {
    case InputDomain::Uniform:
      break;
    case InputDomain::Positive:
      v = 1.125f + 0.875f * v;
      break;
    case InputDomain::Huge:
      v *= 1e30f;
      break;
    case InputDomain::Tiny:
      v *= 1e-30f;
      break;
    case InputDomain::NonFinite: {
      // About one element in eight, at positions the values decide.
      uint64_t h = splitmix64Mix(seed ^ fnv1a64(name) ^ uint64_t(i));
      if (h % 8 == 0)
        v = (h >> 3) % 3 == 0   ? NAN
            : (h >> 3) % 3 == 1 ? INFINITY
                                : -INFINITY;
      break;
    }
    }
    ++i;
  }
  return t;
}
