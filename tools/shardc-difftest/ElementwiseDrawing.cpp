//===- ElementwiseDrawing.cpp - elementwise ops from the op registry ------===//
//
// Every registered op with an elementwise trait is drawable, with no list
// of ops here: the op's ValueDomainOpInterface (declared in its ODS entry)
// says which operands it is defined and well conditioned on, whether its
// result is correctly rounded, and where it jumps; the op's own kernel
// gives the bounds of its result. A new elementwise op is drawn as soon as
// it is registered, on any finite operands unless it declares otherwise.
//
// The op is chosen by rendezvous hashing: of one random draw, each
// candidate op gets a score hashed from the draw and its name, and the
// highest score wins. Adding an op changes only the draws it wins; every
// other draw keeps its op, so seeded cases of other ops stay the same.
//
//===----------------------------------------------------------------------===//

#include "ProgramBuilder.h"

#include "shardc/Dialect/ValueDomainOpInterface.h"
#include "shardc/Interpreter/Kernels.h"
#include "shardc/Support/RandomTensor.h"

#include "llvm/ADT/ScopeExit.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::difftest;

namespace {

/// FNV-1a of the op's name: the same on every platform and run.
uint64_t hashName(StringRef name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name)
    h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

bool isElementwise(OperationName name, unsigned arity) {
  return arity == 1 ? name.hasTrait<shardc::OpTrait::UnaryElementwise>()
                    : name.hasTrait<shardc::OpTrait::BinaryElementwise>();
}

} // namespace

std::optional<OperationName> shardc::difftest::pickRegisteredOp(
    MLIRContext &ctx, llvm::function_ref<bool(OperationName)> candidate,
    uint64_t draw) {
  std::optional<OperationName> best;
  uint64_t bestScore = 0;
  for (RegisteredOperationName name : ctx.getRegisteredOperations()) {
    if (name.getDialectNamespace() != ShardcDialect::getDialectNamespace() ||
        !candidate(name))
      continue;
    uint64_t score = splitmix64Mix(draw ^ hashName(name.getStringRef()));
    if (!best || score > bestScore) {
      best = name;
      bestScore = score;
    }
  }
  return best;
}

namespace {

/// Points of [lo, hi] at which a kernel is sampled: both ends, 0 when
/// inside, and evenly spaced ones between.
SmallVector<float> samplePoints(const ValueInfo &i) {
  constexpr int kSteps = 64;
  SmallVector<float> points;
  for (int k = 0; k <= kSteps; ++k)
    points.push_back(static_cast<float>(i.lo + (i.hi - i.lo) * k / kSteps));
  if (i.lo < 0 && i.hi > 0)
    points.push_back(0.0f);
  return points;
}

/// The hull of a kernel's `results` at the sample points `columns` (one
/// per operand) of the bounds `operands`: see kernelBounds.
std::optional<ValueInfo> hullOfSamples(ArrayRef<float> results,
                                       ArrayRef<SmallVector<float>> columns,
                                       ArrayRef<ValueInfo> operands) {
  double lo = INFINITY, hi = -INFINITY, endLo = INFINITY, endHi = -INFINITY;
  for (auto [e, y] : llvm::enumerate(results)) {
    if (!std::isfinite(y))
      return std::nullopt;
    lo = std::min<double>(lo, y);
    hi = std::max<double>(hi, y);
    // At the ends or at 0 (where relu and abs have their kink) the
    // sample is the extremum itself.
    bool atEnds = llvm::all_of(llvm::enumerate(columns), [&](auto column) {
      float v = column.value()[e];
      const ValueInfo &i = operands[column.index()];
      return v == static_cast<float>(i.lo) || v == static_cast<float>(i.hi) ||
             v == 0.0f;
    });
    if (atEnds) {
      endLo = std::min<double>(endLo, y);
      endHi = std::max<double>(endHi, y);
    }
  }
  ValueInfo r;
  double margin = 0.02 * (hi - lo);
  r.lo = lo < endLo ? lo - margin : lo;
  r.hi = hi > endHi ? hi + margin : hi;
  return r;
}

/// The bounds of `op`'s result over its operands' bounds, from the op's
/// kernel run on a grid of their values. Exact at the ends of monotonic
/// functions; where an inner point lies beyond them (sin, gelu) the side
/// is widened by 2 % of the range for the extremum between grid points.
/// Nothing if a result is not finite.
std::optional<ValueInfo> kernelBounds(Operation *op,
                                      ArrayRef<ValueInfo> operands) {
  SmallVector<SmallVector<float>> axes;
  for (const ValueInfo &i : operands)
    axes.push_back(samplePoints(i));
  int64_t n = 1;
  for (const auto &a : axes)
    n *= a.size();
  // Operand k runs over its points with a stride of the earlier axes.
  SmallVector<SmallVector<float>> columns(axes.size());
  for (int64_t e = 0; e < n; ++e)
    for (int64_t k = 0, rest = e; k < (int64_t)axes.size(); ++k) {
      columns[k].push_back(axes[k][rest % axes[k].size()]);
      rest /= axes[k].size();
    }
  // A detached copy of the op on 1-D operands of n elements.
  auto type = RankedTensorType::get({n}, Float32Type::get(op->getContext()));
  Block scratch;
  OperationState state(op->getLoc(), op->getName());
  for (unsigned k = 0; k < axes.size(); ++k)
    state.addOperands(scratch.addArgument(type, op->getLoc()));
  state.addTypes(type);
  Operation *probe = Operation::create(state);
  llvm::scope_exit release([&] { probe->destroy(); });
  KernelOpInterface kernel = getKernel(probe);
  llvm::Expected<Tensor> result = Tensor::allocate({n});
  if (!kernel || !result) {
    if (!result)
      llvm::consumeError(result.takeError());
    return std::nullopt;
  }
  SmallVector<Tensor> inputs;
  SmallVector<const Tensor *> inputPtrs;
  for (auto &column : columns) {
    llvm::Expected<Tensor> t = Tensor::fromValues({n}, column);
    if (!t) {
      llvm::consumeError(t.takeError());
      return std::nullopt;
    }
    inputs.push_back(std::move(*t));
  }
  for (Tensor &t : inputs)
    inputPtrs.push_back(&t);
  if (failed(
          kernel.evaluateKernel(inputPtrs, *result, defaultMaxTensorBytes())))
    return std::nullopt;
  return hullOfSamples(result->values(), columns, operands);
}

/// A pending sum's summands times a non-finite value: where an op
/// distributes over some operands (its partial-sum sets leave others out,
/// as mul's and div's do), a device whose summand is 0 makes 0 * Inf = NaN
/// where the whole sum times Inf is Inf (see ValueInfo::mayBeSummed).
bool summandTimesNonFinite(Operation *op, ArrayRef<ValueInfo> operands) {
  auto rule = dyn_cast<ShardingRuleOpInterface>(op);
  if (!rule)
    return false;
  SmallVector<unsigned> sets;
  rule.getPartialSumOperandSets(sets);
  for (unsigned set : sets)
    for (auto [k, summed] : llvm::enumerate(operands))
      for (auto [j, other] : llvm::enumerate(operands))
        if ((set >> k & 1) && !(set >> j & 1) &&
            (summed.mayBeSummed || !summed.exact) && other.nonFinite)
          return true;
  return false;
}

/// The second operand of a binary op on `x`: x itself, a value of its
/// type, a new input or a constant.
Value secondOperand(ProgramBuilder &pb, Value x) {
  auto type = ProgramBuilder::tensorOf(x);
  int64_t choice = pb.rng.uniform(4);
  if (choice == 0)
    return x;
  if (choice == 1) {
    SmallVector<Value> same;
    for (Value p : pb.pool)
      if (p.getType() == type && p != x)
        same.push_back(p);
    if (!same.empty())
      return same[pb.rng.uniform(same.size())];
  } else if (choice == 2 && pb.canAddInput()) {
    return pb.addInput(type.getShape());
  }
  return pb.drawConstant(type, /*positive=*/false);
}

/// `operands` made to hold values of `name`'s operand domains; false if
/// they cannot. One value read twice must stay one value, so it passes
/// only when it already fits every domain it is read in or the domains
/// agree.
bool fitDomains(ProgramBuilder &pb, OperationName name,
                SmallVectorImpl<Value> &operands) {
  bool oneValue = operands.size() == 2 && operands[0] == operands[1];
  if (oneValue && !(getOperandDomain(name, 0) == getOperandDomain(name, 1))) {
    for (unsigned k = 0; k < 2; ++k)
      if (!pb.holdsDomain(operands[k], getOperandDomain(name, k)))
        return false;
    return true;
  }
  for (unsigned k = 0; k < operands.size(); ++k) {
    if (oneValue && k == 1) {
      operands[1] = operands[0];
      continue;
    }
    operands[k] = pb.fitDomain(operands[k], getOperandDomain(name, k));
    if (!operands[k])
      return false;
  }
  return true;
}

} // namespace

Value ProgramBuilder::buildElementwiseOp(Value x, unsigned arity) {
  std::optional<OperationName> name = pickRegisteredOp(
      ctx, [&](OperationName n) { return isElementwise(n, arity); },
      rng.next());
  if (!name)
    return nullptr;
  SmallVector<Value> operands = {x};
  if (arity == 2) {
    Value y = secondOperand(*this, x);
    if (y != x && rng.chance(0.5))
      std::swap(x, y);
    operands = {x, y};
  }
  if (!fitDomains(*this, *name, operands))
    return nullptr;
  SmallVector<ValueInfo> in;
  for (Value v : operands)
    in.push_back(info(v));
  // Where the op jumps, a rounding difference in an operand flips its value
  // (or, in a backward pass, its gradient's mask): exact operands only.
  Continuity continuity = getContinuity(*name);
  bool allExact = llvm::all_of(in, [](const ValueInfo &i) { return i.exact; });
  if (!allExact &&
      (continuity == Continuity::ValueJumps ||
       (continuity == Continuity::DerivativeJumps && differentiated)))
    return nullptr;
  OperationState state(freshLoc(), *name);
  state.addOperands(operands);
  state.addTypes(operands.front().getType());
  Operation *op = b.create(state);
  std::optional<ValueInfo> r = kernelBounds(op, in);
  // Within the generator's magnitudes: no overflow, nothing sinking into
  // subnormals (where sums in another order differ by more than the
  // tolerance), unless the result is 0 exactly.
  if (!r || !fits(*r) || (r->scale() < kMinProductScale && r->scale() != 0) ||
      summandTimesNonFinite(op, in)) {
    op->erase();
    return nullptr;
  }
  r->exact = allExact && isCorrectlyRounded(*name);
  r->nonFinite =
      llvm::any_of(in, [](const ValueInfo &i) { return i.nonFinite; });
  r->mayBeSummed =
      llvm::any_of(in, [](const ValueInfo &i) { return i.mayBeSummed; });
  return record(op->getResult(0), *r);
}
