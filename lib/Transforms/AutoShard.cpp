//===- AutoShard.cpp - --shardc-auto-shard --------------------------------===//
//
// Builds the auto-sharding problem of a function (AutoShardProblem.h): a
// node per tensor argument, per op and per function result; an op's
// strategies are the assignments of mesh axes to the factors of its
// sharding rule, an argument's and a result's the shardings of its shape.
// Prices them with the cost model the partitioner and the simulator share
// (CostOpInterface FLOPs at local sizes, the reshard planner's collectives
// on the alpha-beta machine), solves (AutoShardSolver.cpp) and says what
// the plan writes back (AutoShardPass.cpp writes it).
//
//===----------------------------------------------------------------------===//

#include "AutoShardProblem.h"
#include "AutoShardStarts.h"

#include "shardc/Analysis/ReshardPlanner.h"
#include "shardc/Dialect/CollectiveOpInterface.h"
#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/ShardingRule.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/AutoShard.h"
#include "shardc/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"

#include <cctype>
#include <chrono>
#include <functional>

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;

namespace {

int64_t elementBytes(Type type) {
  return (cast<RankedTensorType>(type).getElementTypeBitWidth() + 7) / 8;
}

/// One strategy of a node: what it needs of each operand, what it makes.
struct Strategy {
  SmallVector<ShardingAttr, 3> needs;
  ShardingAttr out;
  double seconds = 0;
};

/// What a node of the problem stands for.
struct NodeSource {
  enum Kind { Argument, Op, FunctionResult } kind;
  unsigned index = 0; // argument or result number
  Operation *op = nullptr;
  bool isUser = false;
  std::vector<Strategy> strategies;
};

class ProblemBuilder {
public:
  ProblemBuilder(func::FuncOp func, MeshOp mesh,
                 const AutoShardOptions &options)
      : func(func), mesh(mesh),
        meshRef(FlatSymbolRefAttr::get(mesh.getSymNameAttr())),
        options(options), ctx(func.getContext()) {}

  LogicalResult build();
  /// Per node, the strategies making the sharding `laidOut` gives it
  /// (none: any strategy; one of them, else).
  std::vector<std::vector<unsigned>>
  strategiesMaking(const LaidOutShardings &laidOut) const;
  AutoShardProblem problem;
  std::vector<NodeSource> sources;
  /// Per problem use: the operand it reads (consumer op, operand number);
  /// null op for a function result.
  std::vector<std::pair<Operation *, unsigned>> useOperands;
  /// The value each problem value stands for.
  std::vector<Value> valueOf;

private:
  /// Every sharding of `shape`: each mesh axis on no dim or on one it
  /// splits (splittable), a dim's axes in mesh order; the replicated one
  /// first.
  std::vector<ShardingAttr> enumerateShardings(ArrayRef<int64_t> shape);
  /// Every strategy of `op` under `rule`.
  std::vector<Strategy> enumerateStrategies(Operation *op,
                                            const ShardingRule &rule);
  /// For each strategy of `out`, its variants keeping a pending sum over
  /// unused axes through the operands `op` is linear in
  /// (ShardingRuleOpInterface::getPartialSumOperandSets: add's two, div's
  /// dividend): the partitioner's pass-through, which sums the q, k and v
  /// input gradients of attention before one all_reduce.
  void addPendingSumVariants(Operation *op, std::vector<Strategy> &out);
  /// `s` with `pending` added to its pending axes, in mesh order.
  ShardingAttr withPendingAxes(ShardingAttr s, ArrayRef<StringRef> pending);
  double reshardSeconds(ShardingAttr from, ShardingAttr to, Type type);
  ShardingAttr makeSharding(ArrayRef<SmallVector<StringRef>> dims,
                            ArrayRef<StringRef> partial = {}) {
    return ShardingAttr::get(ctx, meshRef, dims, partial);
  }

  func::FuncOp func;
  MeshOp mesh;
  FlatSymbolRefAttr meshRef;
  const AutoShardOptions &options;
  MLIRContext *ctx;
  llvm::DenseMap<std::tuple<Attribute, Attribute, Type>, double> plans;
};

/// Whether an axis of `size` devices may split `extent` elements: into
/// equal blocks, or into blocks of ceil(extent / size) with the last ones
/// padded (docs/sharding.md#uneven-dims), as long as every device holds a
/// real element (a vocabulary of 250 over 4, not 3 rows over 4).
static bool splittable(int64_t extent, int64_t size) {
  if (size <= 1)
    return false;
  if (extent % size == 0)
    return true;
  int64_t block = (extent + size - 1) / size;
  return block * (size - 1) < extent;
}

/// The elements each device holds of `extent` split over `size` devices
/// (padding included).
static int64_t blockSize(int64_t extent, int64_t size) {
  return (extent + size - 1) / size;
}

std::vector<ShardingAttr>
ProblemBuilder::enumerateShardings(ArrayRef<int64_t> shape) {
  SmallVector<StringRef> axes = mesh.getAxisNameList();
  std::vector<ShardingAttr> out;
  SmallVector<SmallVector<StringRef>> dims(shape.size());
  SmallVector<int64_t> left(shape);
  std::function<void(size_t)> visit = [&](size_t a) {
    if (a == axes.size()) {
      out.push_back(makeSharding(dims));
      return;
    }
    visit(a + 1);
    int64_t size = mesh.getAxisSize(axes[a]);
    for (size_t d = 0; d < shape.size(); ++d) {
      if (!splittable(left[d], size))
        continue;
      int64_t whole = left[d];
      dims[d].push_back(axes[a]);
      left[d] = blockSize(whole, size);
      visit(a + 1);
      left[d] = whole;
      dims[d].pop_back();
    }
  };
  visit(0);
  return out;
}

std::vector<Strategy>
ProblemBuilder::enumerateStrategies(Operation *op, const ShardingRule &rule) {
  SmallVector<StringRef> axes = mesh.getAxisNameList();
  int64_t numFactors = rule.getNumFactors();
  SmallVector<SmallVector<StringRef>> factorAxes(numFactors);
  SmallVector<int64_t> left;
  for (int64_t f = 0; f < numFactors; ++f)
    left.push_back(rule.getFactor(f).size);
  auto cost = dyn_cast<CostOpInterface>(op);
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  std::vector<Strategy> out;

  auto splitUnevenly = [&](int64_t f) {
    int64_t devices = 1;
    for (StringRef axis : factorAxes[f])
      devices *= mesh.getAxisSize(axis);
    return rule.getFactor(f).size % devices != 0;
  };
  // The strategy of the current factor axes, if every tensor can say it.
  auto emit = [&]() {
    Strategy s;
    SmallVector<StringRef> partial, maxed;
    for (int64_t f = 0; f < numFactors; ++f) {
      FactorKind kind = rule.getFactor(f).kind;
      if (kind == FactorKind::Reduction)
        partial.append(factorAxes[f].begin(), factorAxes[f].end());
      if (kind == FactorKind::MaxReduction)
        maxed.append(factorAxes[f].begin(), factorAxes[f].end());
    }
    for (unsigned t = 0; t < rule.getNumTensors(); ++t) {
      SmallVector<SmallVector<StringRef>> dims;
      for (const DimFactors &dim : rule.getTensor(t)) {
        SmallVector<StringRef> &dimAxes = dims.emplace_back();
        // A padded block of one factor of a compound dim is not a block of
        // the dim (250 x 64 rows split by the 250 is not 16000 split).
        if (dim.size() > 1 && llvm::any_of(dim, splitUnevenly))
          return;
        bool previousFull = true;
        for (int64_t f : dim) {
          if (!previousFull) {
            // A minor factor split under an unsplit major one: no dim
            // layout says it.
            if (!factorAxes[f].empty())
              return;
            continue;
          }
          dimAxes.append(factorAxes[f].begin(), factorAxes[f].end());
          previousFull = left[f] == 1;
        }
      }
      if (rule.isResultTensor(t))
        s.out = makeSharding(dims, partial);
      else
        s.needs.push_back(makeSharding(dims));
    }
    if (cost) {
      SmallVector<double, 8> sizes;
      for (int64_t f = 0; f < numFactors; ++f)
        sizes.push_back(double(left[f]));
      s.seconds = cost.getFlops(sizes) / options.machine.flopsPerSecond;
    }
    if (!maxed.empty()) {
      int64_t n = 1;
      for (StringRef axis : maxed)
        n *= mesh.getAxisSize(axis);
      int64_t bytes = elementBytes(resultType);
      for (int64_t size : getLocalShape(s.out, mesh, resultType.getShape()))
        bytes *= size;
      s.seconds += options.machine.collectiveSeconds(CollectiveKind::AllReduce,
                                                     n, bytes);
    }
    out.push_back(std::move(s));
  };
  std::function<void(size_t)> visit = [&](size_t a) {
    if (a == axes.size())
      return emit();
    visit(a + 1);
    int64_t size = mesh.getAxisSize(axes[a]);
    for (int64_t f = 0; f < numFactors; ++f) {
      if (!splittable(left[f], size) ||
          rule.getFactor(f).kind == FactorKind::NeedReplication)
        continue;
      int64_t whole = left[f];
      factorAxes[f].push_back(axes[a]);
      left[f] = blockSize(whole, size);
      visit(a + 1);
      left[f] = whole;
      factorAxes[f].pop_back();
    }
  };
  visit(0);
  addPendingSumVariants(op, out);
  return out;
}

void ProblemBuilder::addPendingSumVariants(Operation *op,
                                           std::vector<Strategy> &out) {
  SmallVector<unsigned, 2> sets;
  if (auto ruled = dyn_cast<ShardingRuleOpInterface>(op))
    ruled.getPartialSumOperandSets(sets);
  SmallVector<StringRef> axes = mesh.getAxisNameList();
  size_t base = out.size();
  for (unsigned set : sets) {
    if (set >> op->getNumOperands() != 0)
      continue;
    // As the partitioner: a summand read elsewhere too is reduced for its
    // other readers anyway, and kept pending here would be reduced twice.
    bool readHereOnly = true;
    for (unsigned k = 0; k < op->getNumOperands(); ++k)
      if (set >> k & 1)
        readHereOnly &= op->getOperand(k).hasOneUse();
    if (!readHereOnly)
      continue;
    for (size_t i = 0; i < base; ++i) {
      Strategy s = out[i]; // a copy: the variants are appended to `out`
      // The axes no factor of the strategy uses (none on a dim, none
      // pending already).
      auto used = [&](StringRef axis) {
        auto in = [&](ShardingAttr t) {
          if (llvm::is_contained(t.getPartialAxes(), axis))
            return true;
          for (size_t d = 0; d < t.getRank(); ++d)
            if (llvm::is_contained(t.getDimAxes(d), axis))
              return true;
          return false;
        };
        return in(s.out) || llvm::any_of(s.needs, in);
      };
      SmallVector<StringRef> free;
      for (StringRef axis : axes)
        if (mesh.getAxisSize(axis) > 1 && !used(axis))
          free.push_back(axis);
      for (unsigned mask = 1; mask < (1u << free.size()); ++mask) {
        SmallVector<StringRef> pending;
        for (auto [j, axis] : llvm::enumerate(free))
          if (mask >> j & 1)
            pending.push_back(axis);
        Strategy v = s;
        v.out = withPendingAxes(s.out, pending);
        for (unsigned k = 0; k < op->getNumOperands(); ++k)
          if (set >> k & 1)
            v.needs[k] = withPendingAxes(s.needs[k], pending);
        out.push_back(std::move(v));
      }
    }
  }
}

ShardingAttr ProblemBuilder::withPendingAxes(ShardingAttr s,
                                             ArrayRef<StringRef> pending) {
  SmallVector<SmallVector<StringRef>> dims;
  for (size_t d = 0; d < s.getRank(); ++d)
    dims.push_back(s.getDimAxes(d));
  SmallVector<StringRef> partial;
  for (StringRef axis : mesh.getAxisNameList())
    if (llvm::is_contained(s.getPartialAxes(), axis) ||
        llvm::is_contained(pending, axis))
      partial.push_back(axis);
  return makeSharding(dims, partial);
}

double ProblemBuilder::reshardSeconds(ShardingAttr from, ShardingAttr to,
                                      Type type) {
  auto key = std::make_tuple(Attribute(from), Attribute(to), type);
  auto it = plans.find(key);
  if (it != plans.end())
    return it->second;
  auto tensor = cast<RankedTensorType>(type);
  FailureOr<ReshardPlan> plan =
      planReshard(from, to, mesh, tensor.getShape(), elementBytes(type));
  double seconds = succeeded(plan) ? plan->seconds(options.machine) : kNoPlan;
  plans[key] = seconds;
  return seconds;
}

static bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

LogicalResult ProblemBuilder::build() {
  Block &body = func.getBody().front();
  StringAttr shardingName =
      StringAttr::get(ctx, ShardcDialect::getShardingAttrName());
  // A training step's parameters and state stay live all along (the
  // simulator's argumentsStayLive).
  bool argumentsStayLive = false;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    argumentsStayLive |=
        func.getArgAttr(i, ShardcDialect::getParamAttrName()) ||
        func.getArgAttr(i, ShardcDialect::getOptimizerStateAttrName());

  int64_t numPoints = 0;
  llvm::DenseMap<Operation *, int64_t> pointOf;
  for (Operation &op : body)
    pointOf[&op] = numPoints++;
  problem.numPoints = numPoints;

  llvm::DenseMap<Value, unsigned> nodeOf;
  auto addNode = [&](NodeSource source) {
    AutoShardProblem::Node node;
    for (const Strategy &s : source.strategies)
      node.cost.push_back(s.seconds);
    problem.nodes.push_back(std::move(node));
    sources.push_back(std::move(source));
    return unsigned(problem.nodes.size() - 1);
  };

  // Arguments.
  llvm::StringMap<unsigned> argumentByName;
  for (BlockArgument arg : body.getArguments()) {
    if (!isTensor(arg))
      continue;
    NodeSource source{NodeSource::Argument, arg.getArgNumber()};
    if (auto s = func.getArgAttrOfType<ShardingAttr>(
            arg.getArgNumber(), ShardcDialect::getShardingAttrName())) {
      source.isUser = true;
      source.strategies.push_back({{}, s});
    } else {
      for (ShardingAttr s :
           enumerateShardings(cast<RankedTensorType>(arg.getType()).getShape()))
        source.strategies.push_back({{}, s});
    }
    nodeOf[arg] = addNode(std::move(source));
    argumentByName[getArgumentName(func, arg.getArgNumber())] = nodeOf[arg];
  }

  // Ops.
  for (Operation &op : body.without_terminator()) {
    if (op.getNumResults() != 1 || !isTensor(op.getResult(0)))
      return op.emitOpError("cannot be auto-sharded: only ops with one tensor "
                            "result are");
    NodeSource source{NodeSource::Op, 0, &op};
    auto user = op.getAttrOfType<ShardingAttr>(shardingName);
    source.isUser = user != nullptr;
    SmallVector<ShardingAttr, 3> replicatedOperands;
    for (Value v : op.getOperands())
      replicatedOperands.push_back(
          isTensor(v)
              ? ShardingAttr::getReplicated(
                    ctx, meshRef, cast<RankedTensorType>(v.getType()).getRank())
              : ShardingAttr());
    if (ShardingAttr pinned = getConstrainedSharding(&op)) {
      source.isUser = true;
      source.strategies.push_back({{pinned}, pinned});
    } else if (op.hasTrait<mlir::OpTrait::ConstantLike>()) {
      // The partitioner makes every constant whole on every device.
      source.strategies.push_back(
          {replicatedOperands,
           ShardingAttr::getReplicated(
               ctx, meshRef,
               cast<RankedTensorType>(op.getResult(0).getType()).getRank())});
    } else if (auto ruled = dyn_cast<ShardingRuleOpInterface>(op)) {
      for (Strategy &s : enumerateStrategies(&op, ruled.getShardingRule())) {
        // A user annotation is a hard constraint: only the strategies
        // making it (a user-given partial must match too).
        if (user && (user.getDims() != s.out.getDims() ||
                     (user.isPartial() && user != s.out)))
          continue;
        source.strategies.push_back(std::move(s));
      }
      if (source.strategies.empty())
        return op.emitOpError("cannot be auto-sharded: no strategy of its "
                              "sharding rule makes its annotated sharding ")
               << user;
    } else {
      return op.emitOpError("cannot be auto-sharded: it has no sharding rule");
    }
    unsigned n = addNode(std::move(source));
    nodeOf[op.getResult(0)] = n;
  }

  // Function results.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  std::vector<unsigned> resultNodes;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    NodeSource source{NodeSource::FunctionResult, unsigned(i)};
    if (auto s = func.getResultAttrOfType<ShardingAttr>(
            i, ShardcDialect::getShardingAttrName())) {
      source.isUser = true;
      source.strategies.push_back({{s}, s});
    } else {
      for (ShardingAttr s :
           enumerateShardings(cast<RankedTensorType>(v.getType()).getShape()))
        source.strategies.push_back({{s}, s});
      // And whatever its producer may make (a dim's axes out of mesh
      // order, as a sharding_constraint may give), so that returning it
      // as it is stays a choice.
      if (auto it = nodeOf.find(v); it != nodeOf.end())
        for (const Strategy &made : sources[it->second].strategies)
          if (!made.out.isPartial() &&
              llvm::none_of(source.strategies, [&](const Strategy &s) {
                return s.out == made.out;
              }))
            source.strategies.push_back({{made.out}, made.out});
    }
    resultNodes.push_back(addNode(std::move(source)));
  }

  // A step's next parameter (and state) is laid out like the argument it
  // replaces, so that steps chain.
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto next = func.getResultAttrOfType<StringAttr>(
        i, ShardcDialect::getNextAttrName());
    if (!next)
      continue;
    auto it = argumentByName.find(next.getValue());
    if (it == argumentByName.end())
      continue;
    unsigned a = it->second, r = resultNodes[i];
    NodeSource &arg = sources[a], &res = sources[r];
    if (arg.isUser == res.isUser) {
      if (!arg.isUser)
        problem.ties.push_back({a, r});
      continue;
    }
    // One side annotated: the other follows it.
    NodeSource &from = arg.isUser ? arg : res, &to = arg.isUser ? res : arg;
    ShardingAttr s = from.strategies.front().out;
    to.strategies = {{to.kind == NodeSource::FunctionResult
                          ? SmallVector<ShardingAttr, 3>{s}
                          : SmallVector<ShardingAttr, 3>{},
                      s}};
    problem.nodes[arg.isUser ? r : a].cost = {0};
  }

  // Values and their uses.
  llvm::DenseMap<Value, unsigned> valueIndex;
  auto addValue = [&](Value v, unsigned producer, int64_t defPoint) {
    AutoShardProblem::Value value;
    value.producer = producer;
    value.defPoint = defPoint;
    auto type = cast<RankedTensorType>(v.getType());
    llvm::MapVector<Attribute, unsigned> layouts;
    for (const Strategy &s : sources[producer].strategies) {
      auto [it, inserted] = layouts.insert({s.out, layouts.size()});
      value.layoutOf.push_back(it->second);
    }
    for (auto &[attr, index] : layouts) {
      int64_t bytes = elementBytes(type);
      for (int64_t size :
           getLocalShape(cast<ShardingAttr>(attr), mesh, type.getShape()))
        bytes *= size;
      value.layoutBytes.push_back(bytes);
    }
    // Alive until its last use (the end for a stay-live argument, or a value
    // nothing reads, which the simulator never frees).
    int64_t end = -1;
    for (OpOperand &use : v.getUses())
      end = std::max(end, pointOf.lookup(use.getOwner()));
    if (end < 0 || (argumentsStayLive && isa<BlockArgument>(v))) {
      end = numPoints - 1;
      value.heldToEnd = true;
    }
    value.endPoint = end;
    Operation *def = v.getDefiningOp();
    value.hoisted = def && def->hasTrait<mlir::OpTrait::ConstantLike>();
    valueIndex[v] = problem.values.size();
    problem.values.push_back(std::move(value));
    valueOf.push_back(v);
    return layouts;
  };
  std::vector<llvm::MapVector<Attribute, unsigned>> layoutsOf;
  for (BlockArgument arg : body.getArguments())
    if (isTensor(arg))
      layoutsOf.push_back(addValue(arg, nodeOf[arg], 0));
  // Equal constants are one value: cleanup folds them into one.
  llvm::DenseMap<std::pair<Attribute, Type>, Value> constants;
  for (Operation &op : body.without_terminator()) {
    Value v = op.getResult(0);
    Attribute content;
    if (op.hasTrait<mlir::OpTrait::ConstantLike>() &&
        matchPattern(v, m_Constant(&content))) {
      auto [it, inserted] = constants.try_emplace({content, v.getType()}, v);
      if (!inserted) {
        unsigned rep = valueIndex.lookup(it->second);
        int64_t end = -1;
        for (OpOperand &use : v.getUses())
          end = std::max(end, pointOf.lookup(use.getOwner()));
        problem.values[rep].endPoint =
            std::max(problem.values[rep].endPoint, end);
        valueIndex[v] = rep;
        continue;
      }
    }
    layoutsOf.push_back(addValue(v, nodeOf[v], pointOf[&op]));
  }

  std::vector<llvm::MapVector<Attribute, unsigned>> targetsOf(
      problem.values.size());
  auto addUse = [&](Value v, unsigned consumer, unsigned operand,
                    Operation *owner) {
    unsigned vi = valueIndex.lookup(v);
    AutoShardProblem::Use use;
    use.value = vi;
    use.consumer = consumer;
    use.point = pointOf.lookup(owner);
    for (const Strategy &s : sources[consumer].strategies) {
      auto [it, inserted] =
          targetsOf[vi].insert({s.needs[operand], targetsOf[vi].size()});
      use.targetOf.push_back(it->second);
    }
    problem.uses.push_back(std::move(use));
    useOperands.push_back({owner, operand});
  };
  for (Operation &op : body.without_terminator())
    for (auto [k, v] : llvm::enumerate(op.getOperands()))
      if (isTensor(v))
        addUse(v, nodeOf[op.getResult(0)], k, &op);
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    addUse(v, resultNodes[i], 0, ret);

  for (auto [vi, value] : llvm::enumerate(problem.values)) {
    Type type = valueOf[vi].getType();
    auto tensor = cast<RankedTensorType>(type);
    for (auto &[attr, t] : targetsOf[vi]) {
      int64_t bytes = elementBytes(type);
      for (int64_t size :
           getLocalShape(cast<ShardingAttr>(attr), mesh, tensor.getShape()))
        bytes *= size;
      value.targetBytes.push_back(bytes);
    }
    for (auto &[from, l] : layoutsOf[vi]) {
      auto &seconds = value.moveSeconds.emplace_back();
      auto &same = value.isSame.emplace_back();
      for (auto &[to, t] : targetsOf[vi]) {
        same.push_back(from == to);
        seconds.push_back(from == to
                              ? 0.0
                              : reshardSeconds(cast<ShardingAttr>(from),
                                               cast<ShardingAttr>(to), type));
      }
    }
  }
  problem.memoryBudget = options.memoryBudgetBytes;
  indexUses(problem);
  return success();
}

std::vector<std::vector<unsigned>>
ProblemBuilder::strategiesMaking(const LaidOutShardings &laidOut) const {
  llvm::DenseMap<Operation *, unsigned> opIndex;
  for (Operation &op :
       func::FuncOp(func).getBody().front().without_terminator())
    opIndex.try_emplace(&op, opIndex.size());
  std::vector<std::vector<unsigned>> allowed(sources.size());
  for (auto [n, source] : llvm::enumerate(sources)) {
    ShardingAttr want = source.kind == NodeSource::Argument
                            ? laidOut.arguments[source.index]
                        : source.kind == NodeSource::Op
                            ? laidOut.opResults[opIndex.lookup(source.op)]
                            : laidOut.functionResults[source.index];
    if (!want)
      continue;
    // As for a user's annotation: a pending sum of the same dims makes it
    // too (the partitioner reduces it where a consumer needs it whole).
    for (auto [i, strategy] : llvm::enumerate(source.strategies))
      if (strategy.out == want ||
          (!want.isPartial() && strategy.out.getDims() == want.getDims()))
        allowed[n].push_back(unsigned(i));
  }
  return allowed;
}

/// "argument w0", "h", "output #0 (z)".
std::string describeNode(func::FuncOp func, const NodeSource &source) {
  switch (source.kind) {
  case NodeSource::Argument:
    return "input " + getArgumentName(func, source.index);
  case NodeSource::Op:
    return describeValue(source.op->getResult(0));
  case NodeSource::FunctionResult:
    return "output #" + std::to_string(source.index);
  }
  return "";
}

} // namespace

FailureOr<AutoShardPlan>
shardc::planAutoSharding(func::FuncOp func, MeshOp mesh,
                         const AutoShardOptions &options) {
  auto start = std::chrono::steady_clock::now();
  ProblemBuilder builder(func, mesh, options);
  if (failed(builder.build()))
    return failure();
  const AutoShardProblem &problem = builder.problem;
  // The standard layouts, as plans of the problem: the search starts from
  // them (docs/auto-sharding.md, "Against the standard layouts").
  PlanStarts starts;
  std::vector<StringRef> startNames;
  for (const LaidOutShardings &laidOut : propagateStandardLayouts(func, mesh)) {
    starts.push_back(followLayout(problem, builder.strategiesMaking(laidOut)));
    startNames.push_back(laidOut.layout);
  }
  LeastPeak leastPeak;
  FailureOr<AutoShardSolution> solution =
      solveAutoShard(problem, options.timeLimitSeconds, leastPeak, starts);
  if (failed(solution)) {
    // At the function's location, without the function printed after it.
    InFlightDiagnostic diag = emitError(func.getLoc());
    if (options.memoryBudgetFromMachine)
      diag << "found no sharding plan within the device memory of machine '"
           << options.machine.name << "', " << *options.memoryBudgetBytes
           << " bytes per device (without --memory-budget, the machine's "
              "memory_bytes is the budget)";
    else
      diag << "found no sharding plan within --memory-budget="
           << *options.memoryBudgetBytes << " bytes per device";
    // Only a search that bounded the least from below may call it the
    // least; the time limit is named only when it, not the solver's work
    // limits, ended the search.
    if (leastPeak.bytes >= 0 && leastPeak.proven) {
      diag << "; the least any plan needs is " << leastPeak.bytes << " bytes";
    } else if (leastPeak.bytes >= 0) {
      diag << "; the smallest plan found needs " << leastPeak.bytes << " bytes";
      if (leastPeak.lowerBound >= 0)
        diag << " (and none needs less than " << leastPeak.lowerBound << ")";
      if (leastPeak.timedOut)
        diag << ", in --auto-shard-time-limit";
    } else {
      diag << " within "
           << (leastPeak.timedOut ? "--auto-shard-time-limit"
                                  : "the solver's work limit");
    }
    return failure();
  }
  const std::vector<unsigned> &strategy = solution->strategy;

  AutoShardPlan plan;
  plan.estimatedSeconds = evaluateSeconds(problem, strategy);
  plan.peakBytes = evaluatePeakBytes(problem, strategy);
  plan.optimal = solution->optimal;
  plan.movesPerConsumer = solution->movesPerConsumer;
  plan.heuristic = solution->heuristic;
  plan.timedOut = solution->timedOut;
  plan.workLimited = solution->workLimited;
  plan.unbranchedColumns = solution->unbranchedColumns;
  plan.memoryPriced = solution->memoryPriced;
  plan.clustered = solution->clustered;
  plan.solvedNodes = solution->solvedNodes;
  if (solution->start >= 0)
    plan.startLayout = startNames[solution->start].str();
  plan.numNodes = problem.nodes.size();
  plan.solveSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  std::string finder = !plan.startLayout.empty()
                           ? "the " + plan.startLayout + " layout, improved"
                       : plan.heuristic ? "local search"
                                        : "CBC, unproven";
  // Why the plan is not proven optimal, when it is not.
  std::string unproven;
  llvm::raw_string_ostream why(unproven);
  if (plan.timedOut)
    why << llvm::format("--auto-shard-time-limit=%g s leaves no time to "
                        "prove a plan optimal",
                        options.timeLimitSeconds);
  else if (plan.workLimited)
    why << llvm::format("the solver's work limit (%d simplex iterations, "
                        "%lld branch-and-bound nodes times columns) stopped "
                        "it before proving a plan optimal",
                        kRelaxationIterations, (long long)kBranchAndBoundWork);
  else if (plan.unbranchedColumns)
    why << llvm::format("the program's relaxation is fractional and, at %lld "
                        "columns, the program is too large for "
                        "branch-and-bound (at most %d)",
                        (long long)plan.unbranchedColumns,
                        kMaxBranchAndBoundColumns);
  if (!unproven.empty()) {
    why << ": the plan is the best found"
        << (plan.unbranchedColumns ? ", not proven optimal" : "") << " ("
        << finder
        << ", est_time=" << llvm::format("%.3g", plan.estimatedSeconds) << " s)"
        << (plan.timedOut ? "; a longer limit may find a faster one" : "");
    emitWarning(func.getLoc()) << unproven;
  }

  AutoShardPlan::Assignment &a = plan.assignment;
  a.arguments.assign(func.getNumArguments(), nullptr);
  a.functionResults.assign(func.getNumResults(), nullptr);
  for (auto [n, source] : llvm::enumerate(builder.sources)) {
    const Strategy &chosen = source.strategies[strategy[n]];
    AutoShardChoice choice;
    choice.value = describeNode(func, source);
    choice.chosen = chosen.out;
    choice.isUser = source.isUser;
    choice.seconds = localSeconds(problem, strategy, n, strategy[n]);
    for (auto [s, other] : llvm::enumerate(source.strategies)) {
      if (other.out == chosen.out)
        continue;
      double seconds = localSeconds(problem, strategy, n, s);
      if (!choice.alternative || seconds < choice.alternativeSeconds) {
        choice.alternative = other.out;
        choice.alternativeSeconds = seconds;
      }
    }
    plan.choices.push_back(std::move(choice));
    if (source.isUser)
      continue;
    switch (source.kind) {
    case NodeSource::Argument:
      a.arguments[source.index] = chosen.out;
      break;
    case NodeSource::Op:
      a.results.push_back({source.op, chosen.out});
      break;
    case NodeSource::FunctionResult:
      a.functionResults[source.index] = chosen.out;
      break;
    }
  }
  for (auto [ui, use] : llvm::enumerate(problem.uses)) {
    auto [owner, operand] = builder.useOperands[ui];
    if (isa<func::ReturnOp>(owner))
      continue; // the function result's sharding says it
    const AutoShardProblem::Value &v = problem.values[use.value];
    const Strategy &consumer =
        builder.sources[use.consumer].strategies[strategy[use.consumer]];
    const Strategy &producer =
        builder.sources[v.producer].strategies[strategy[v.producer]];
    if (consumer.needs[operand] != producer.out)
      a.moves.push_back({owner, operand, consumer.needs[operand]});
  }
  return plan;
}
