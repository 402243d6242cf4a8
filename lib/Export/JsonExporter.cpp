//===- JsonExporter.cpp - a shardc module as a JSON graph -----------------===//
//
// The export must be lossless: everything the IR carries is either written
// or rejected with a diagnostic, never dropped. What the format leaves out
// on purpose (result types, locations) the importer recomputes.
//
//===----------------------------------------------------------------------===//

#include "shardc/Export/JsonExporter.h"

#include "JsonWriter.h"

#include "shardc/Dialect/CollectiveShapes.h"
#include "shardc/Dialect/MeshLookup.h"
#include "shardc/Dialect/OpFields.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/UnevenDims.h"
#include "shardc/Dialect/ValueNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace shardc;
using namespace shardc::jsonexport;
using llvm::StringRef;

/// The format's name of a tensor element type, or "".
static StringRef dtypeName(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isF64())
    return "f64";
  if (type.isSignlessInteger(1))
    return "i1";
  if (type.isSignlessInteger(32))
    return "i32";
  if (type.isSignlessInteger(64))
    return "i64";
  return "";
}

/// The entries of an argument or result attribute dictionary (null when the
/// value has none).
static ArrayRef<NamedAttribute> attrsOf(DictionaryAttr dict) {
  return dict ? dict.getValue() : ArrayRef<NamedAttribute>();
}

static OrderedJson intList(ArrayRef<int64_t> values) {
  OrderedJson list = OrderedJson::array();
  for (int64_t v : values)
    list.push_back(v);
  return list;
}

static OrderedJson stringList(ArrayRef<StringRef> values) {
  OrderedJson list = OrderedJson::array();
  for (StringRef v : values)
    list.push_back(v.str());
  return list;
}

/// The shortest decimal that reads back (through a double, as the importer
/// reads it) as exactly `value`: an f32 0.1 is written 0.1, not the
/// 0.10000000149011612 its double widening would print as.
static FailureOr<OrderedJson> floatToJson(const APFloat &value) {
  if (value.isInfinity())
    return OrderedJson(value.isNegative() ? "-inf" : "inf");
  const llvm::fltSemantics &sem = value.getSemantics();
  if (value.isNaN()) {
    // Only the default NaN can be written ("nan"); a payload would be lost.
    if (!value.bitwiseIsEqual(APFloat::getQNaN(sem)))
      return failure();
    return OrderedJson("nan");
  }
  APFloat wide = value;
  bool losesInfo = false;
  wide.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &losesInfo);
  double d = wide.convertToDouble();
  for (int precision = 1; precision <= 17; ++precision) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.*g", precision, d);
    double back = std::strtod(buf, nullptr);
    APFloat narrowed(back);
    narrowed.convert(sem, APFloat::rmNearestTiesToEven, &losesInfo);
    if (narrowed.bitwiseIsEqual(value))
      return OrderedJson(back);
  }
  return OrderedJson(d);
}

namespace {
class GraphExporter {
public:
  explicit GraphExporter(ModuleOp module) : module(module) {}
  LogicalResult run(OrderedJson &graph);

private:
  LogicalResult exportMesh(OrderedJson &graph);
  FailureOr<func::FuncOp> findFunction();
  void nameValues(func::FuncOp func);
  LogicalResult exportInputs(func::FuncOp func, OrderedJson &graph);
  LogicalResult exportOp(Operation *op, OrderedJson &entry);
  /// Writes the op's ODS attributes, and its result shape where nothing
  /// else determines it.
  LogicalResult exportOpFields(Operation *op, const OpFields &fields,
                               OrderedJson &entry);
  /// Writes `attr`, the value of `field`, with the codec of its kind.
  LogicalResult exportField(Operation *op, const OpField &field,
                            Attribute attr, OrderedJson &entry);
  /// A constant's value: its shape, dtype and value or values.
  LogicalResult exportConstantValue(Operation *op, Attribute attr,
                                    OrderedJson &entry);
  LogicalResult exportOutputs(func::FuncOp func, OrderedJson &graph);
  /// Writes `attr` (a sharding) as `entry[shardingKey]`/`entry[partialKey]`.
  LogicalResult putSharding(Operation *at, Attribute attr, OrderedJson &entry,
                            StringRef shardingKey = "sharding",
                            StringRef partialKey = "partial");
  LogicalResult checkMesh(Operation *at, FlatSymbolRefAttr mesh);
  /// The tensor type of a value, checked to be one the format can write.
  FailureOr<RankedTensorType> checkType(Operation *at, Type type,
                                        StringRef what);

  ModuleOp module;
  MeshOp mesh;
  llvm::DenseMap<Value, std::string> names;
  UniqueNames usedNames;
};
} // namespace

LogicalResult GraphExporter::checkMesh(Operation *at, FlatSymbolRefAttr ref) {
  if (ref && ref.getValue() == mesh.getSymName())
    return success();
  return at->emitError() << "names mesh " << ref
                         << " but the JSON graph holds only mesh @"
                         << mesh.getSymName();
}

FailureOr<RankedTensorType> GraphExporter::checkType(Operation *at, Type type,
                                                     StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      dtypeName(tensor.getElementType()).empty())
    return at->emitError() << what << " has type " << type
                           << ", which the JSON graph format cannot express "
                              "(static tensors of f32, f16, bf16, f64, i1, i32 or i64 only)";
  return tensor;
}

LogicalResult GraphExporter::putSharding(Operation *at, Attribute attr,
                                         OrderedJson &entry,
                                         StringRef shardingKey,
                                         StringRef partialKey) {
  auto sharding = dyn_cast<ShardingAttr>(attr);
  if (!sharding)
    return at->emitError() << "'" << ShardcDialect::getShardingAttrName()
                           << "' is " << attr << ", not a #shardc.sharding";
  if (failed(checkMesh(at, sharding.getMesh())))
    return failure();
  // PartitionSpec: null = replicated, "x" = one axis, ["x", "y"] = several.
  OrderedJson dims = OrderedJson::array();
  for (size_t d = 0; d < sharding.getRank(); ++d) {
    SmallVector<StringRef> axes = sharding.getDimAxes(d);
    if (axes.empty())
      dims.push_back(nullptr);
    else if (axes.size() == 1)
      dims.push_back(axes.front().str());
    else
      dims.push_back(stringList(axes));
  }
  entry[shardingKey.str()] = std::move(dims);
  if (sharding.isPartial())
    entry[partialKey.str()] = stringList(sharding.getPartialAxes());
  return success();
}

LogicalResult GraphExporter::exportMesh(OrderedJson &graph) {
  SmallVector<MeshOp> meshes = getMeshes(module);
  if (meshes.size() != 1) {
    // At the first mesh too many, which is where the user has to look.
    Operation *at = meshes.size() > 1 ? meshes[1].getOperation() : module;
    return at->emitError()
           << "a JSON graph has exactly one mesh, but the module has "
           << meshes.size();
  }
  mesh = meshes.front();
  if (!mesh->getDiscardableAttrDictionary().empty())
    return mesh.emitError()
           << "the mesh's attributes " << mesh->getDiscardableAttrDictionary()
           << " cannot be expressed in a JSON graph";
  OrderedJson axes = OrderedJson::array();
  for (auto [name, size] :
       llvm::zip(mesh.getAxisNameList(), mesh.getAxisSizes()))
    axes.push_back(OrderedJson::array({name.str(), size}));
  graph["mesh"] = {{"name", mesh.getSymName().str()}, {"axes", axes}};
  return success();
}

FailureOr<func::FuncOp> GraphExporter::findFunction() {
  auto func = module.lookupSymbol<func::FuncOp>("main");
  if (!func) {
    auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
    if (funcs.size() != 1) {
      Operation *at = funcs.size() > 1 ? funcs[1].getOperation() : module;
      return at->emitError()
             << "expected a function @main or a single function to export, "
                "found "
             << funcs.size() << " functions";
    }
    func = funcs.front();
  }
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return func.emitError("the exported function needs a body of one block");
  if (func.getSymVisibilityAttr())
    return func.emitError("the function's visibility cannot be expressed in "
                          "a JSON graph");
  for (NamedAttribute attr : func->getDiscardableAttrs())
    if (attr.getName() != ShardcDialect::getSpmdAttrName())
      return func.emitError()
             << "the function attribute '" << attr.getName().getValue()
             << "' cannot be expressed in a JSON graph";
  if (func.getNumResults() == 0)
    return func.emitError("a JSON graph needs at least one output, but the "
                          "function returns nothing");
  return func;
}

void GraphExporter::nameValues(func::FuncOp func) {
  // Values keep their source names; duplicates (a pass may reuse a
  // location) get a suffix. Names are generated for the rest only after all
  // source names are taken, so a generated name never displaces one.
  auto claim = [&](Value value, StringRef preferred) {
    names[value] = usedNames.claim(preferred);
  };
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (StringRef name = getSourceName(arg); !name.empty())
      claim(arg, name);
  for (Operation &op : body.without_terminator())
    if (op.getNumResults() == 1)
      if (StringRef name = getSourceName(op.getResult(0)); !name.empty())
        claim(op.getResult(0), name);
  for (BlockArgument arg : body.getArguments())
    if (!names.count(arg))
      claim(arg, "arg" + std::to_string(arg.getArgNumber()));
  for (auto [i, op] : llvm::enumerate(body.without_terminator()))
    if (op.getNumResults() == 1 && !names.count(op.getResult(0)))
      claim(op.getResult(0), "v" + std::to_string(i));
}

LogicalResult GraphExporter::exportInputs(func::FuncOp func,
                                          OrderedJson &graph) {
  OrderedJson inputs = OrderedJson::array();
  for (BlockArgument arg : func.getArguments()) {
    unsigned i = arg.getArgNumber();
    std::string what = "input #" + std::to_string(i);
    FailureOr<RankedTensorType> type = checkType(func, arg.getType(), what);
    if (failed(type))
      return failure();
    OrderedJson entry = {{"name", names[arg]},
                         {"shape", intList(type->getShape())},
                         {"dtype", dtypeName(type->getElementType()).str()}};
    // "param" and "optimizer_state" go last, after the sharding, as the
    // format lists them.
    bool param = false;
    std::optional<double> optimizerState;
    for (NamedAttribute attr : attrsOf(func.getArgAttrDict(i))) {
      if (attr.getName() == ShardcDialect::getNameAttrName())
        continue;
      if (attr.getName() == ShardcDialect::getParamAttrName()) {
        param = true;
        continue;
      }
      if (attr.getName() == ShardcDialect::getOptimizerStateAttrName()) {
        optimizerState = cast<FloatAttr>(attr.getValue()).getValueAsDouble();
        continue;
      }
      if (attr.getName() != ShardcDialect::getShardingAttrName())
        return func.emitError()
               << "attribute '" << attr.getName().getValue() << "' of " << what
               << " cannot be expressed in a JSON "
               << "graph";
      if (failed(putSharding(func, attr.getValue(), entry)))
        return failure();
    }
    if (param)
      entry["param"] = true;
    if (optimizerState)
      entry["optimizer_state"] = *optimizerState;
    inputs.push_back(std::move(entry));
  }
  graph["inputs"] = std::move(inputs);
  return success();
}

/// The key of the partial axes that go with sharding field `key`:
/// "sharding" -> "partial", "result_sharding" -> "result_partial".
static std::string partialKeyFor(StringRef key) {
  if (key.consume_back("sharding"))
    return key.str() + "partial";
  return key.str() + "_partial";
}

LogicalResult GraphExporter::exportConstantValue(Operation *op,
                                                 Attribute attr,
                                                 OrderedJson &entry) {
  auto type = cast<RankedTensorType>(cast<TypedAttr>(attr).getType());
  entry["shape"] = intList(type.getShape());
  entry["dtype"] = dtypeName(type.getElementType()).str();
  if (auto ints = dyn_cast<DenseIntElementsAttr>(attr)) {
    if (ints.isSplat()) {
      entry["value"] = ints.getSplatValue<APInt>().getSExtValue();
      if (type.getElementType().isSignlessInteger(1))
        entry["value"] = ints.getSplatValue<bool>() ? 1 : 0;
      return success();
    }
    OrderedJson values = OrderedJson::array();
    bool isBool = type.getElementType().isSignlessInteger(1);
    for (const APInt &v : ints.getValues<APInt>())
      values.push_back(isBool ? int64_t(v.getZExtValue()) : v.getSExtValue());
    entry["values"] = std::move(values);
    return success();
  }
  auto dense = dyn_cast<DenseFPElementsAttr>(attr);
  if (!dense)
    return op->emitError()
           << "only dense floating-point and integer constants can be "
              "expressed in a JSON graph";
  auto put = [&](const APFloat &v, OrderedJson &out) -> LogicalResult {
    FailureOr<OrderedJson> number = floatToJson(v);
    if (failed(number))
      return op->emitError("a NaN with a payload cannot be "
                           "expressed in a JSON graph");
    out = std::move(*number);
    return success();
  };
  if (dense.isSplat())
    return put(dense.getSplatValue<APFloat>(), entry["value"]);
  OrderedJson values = OrderedJson::array();
  for (const APFloat &v : dense.getValues<APFloat>())
    if (failed(put(v, values.emplace_back())))
      return failure();
  entry["values"] = std::move(values);
  return success();
}

LogicalResult GraphExporter::exportField(Operation *op, const OpField &field,
                                         Attribute attr, OrderedJson &entry) {
  std::string key = field.name.str();
  auto cannotExpress = [&] {
    return op->emitError() << "attribute '" << field.name << "' (" << attr
                           << ") cannot be expressed in a JSON graph";
  };
  switch (field.kind) {
  case OpFieldKind::IntList:
    entry[key] = intList(cast<DenseI64ArrayAttr>(attr).asArrayRef());
    return success();
  case OpFieldKind::NameList: {
    OrderedJson list = OrderedJson::array();
    for (Attribute a : cast<ArrayAttr>(attr))
      list.push_back(cast<StringAttr>(a).getValue().str());
    entry[key] = std::move(list);
    return success();
  }
  case OpFieldKind::IntListList: {
    OrderedJson lists = OrderedJson::array();
    for (Attribute inner : cast<ArrayAttr>(attr)) {
      auto ints = dyn_cast<ArrayAttr>(inner);
      if (!ints)
        return cannotExpress();
      OrderedJson list = OrderedJson::array();
      for (Attribute a : ints) {
        auto n = dyn_cast<IntegerAttr>(a);
        if (!n)
          return cannotExpress();
        list.push_back(n.getInt());
      }
      lists.push_back(std::move(list));
    }
    entry[key] = std::move(lists);
    return success();
  }
  case OpFieldKind::Int:
    entry[key] = cast<IntegerAttr>(attr).getInt();
    return success();
  case OpFieldKind::Float: {
    // The shortest decimal that reads back to the same f32 (1e-05, not
    // 9.99999974e-06): a user wrote one of those.
    APFloat x = cast<FloatAttr>(attr).getValue();
    if (!x.isFinite())
      return cannotExpress();
    float f = x.convertToFloat();
    double shortest = f;
    for (int digits = 1; digits <= 9; ++digits) {
      char text[32];
      std::snprintf(text, sizeof(text), "%.*g", digits, static_cast<double>(f));
      double candidate = std::strtod(text, nullptr);
      if (static_cast<float>(candidate) == f) {
        shortest = candidate;
        break;
      }
    }
    entry[key] = shortest;
    return success();
  }
  case OpFieldKind::String:
    entry[key] = cast<StringAttr>(attr).getValue().str();
    return success();
  case OpFieldKind::Reduction:
    entry[key] =
        stringifyReductionKind(cast<ReductionKindAttr>(attr).getValue()).str();
    return success();
  case OpFieldKind::Elements:
    return exportConstantValue(op, attr, entry);
  case OpFieldKind::Sharding:
    return putSharding(op, attr, entry, key, partialKeyFor(key));
  case OpFieldKind::MeshRef:
    // The graph's one mesh is implicit.
    return checkMesh(op, cast<FlatSymbolRefAttr>(attr));
  case OpFieldKind::ElementType: {
    StringRef name = dtypeName(cast<TypeAttr>(attr).getValue());
    if (name.empty())
      return cannotExpress();
    entry[key] = name.str();
    return success();
  }
  }
  return cannotExpress();
}

/// Whether a default value of this kind is left out. Enumerations and
/// strings (a gather's `mode`) are, as MLIR's printer leaves them out of an
/// attribute dictionary; lists of dims are always written, as the format
/// documents them.
static bool omitsDefault(OpFieldKind kind) {
  return kind == OpFieldKind::Reduction || kind == OpFieldKind::String;
}

LogicalResult GraphExporter::exportOpFields(Operation *op,
                                            const OpFields &fields,
                                            OrderedJson &entry) {
  MLIRContext *ctx = op->getContext();
  for (const OpField &field : fields.attrs) {
    std::optional<Attribute> stored = op->getInherentAttr(field.name);
    Attribute attr = stored ? *stored : Attribute();
    if (!attr && field.defaultValue)
      attr = field.defaultValue(ctx);
    if (!attr)
      continue; // an optional attribute the op does not have
    if (field.defaultValue && omitsDefault(field.kind) &&
        attr == field.defaultValue(ctx))
      continue;
    if (failed(exportField(op, field, attr, entry)))
      return failure();
  }
  if (getResultTypeSource(op->getName(), fields) ==
      ResultTypeSource::GivenShape) {
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    entry["shape"] = intList(type.getShape());
    // Without an operand, the element type is written too (iota).
    if (op->getNumOperands() == 0)
      entry["dtype"] = dtypeName(type.getElementType()).str();
  }
  return success();
}

/// A gather that drops the padding of an uneven dim (all_gather, all_to_all)
/// gives the size it keeps as "size"; the importer would otherwise
/// concatenate the whole blocks.
static void exportConcatenatedSize(Operation *op, OrderedJson &entry) {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective)
    return;
  int64_t dim = getConcatenatedDim(collective);
  MeshOp mesh = lookupMesh(op, collective.getMeshAttr());
  auto input = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto result = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (dim < 0 || !mesh || !input || !result || dim >= input.getRank() ||
      dim >= result.getRank())
    return;
  int64_t group = 1;
  for (Attribute axis : collective.getAxes())
    group *= mesh.getAxisSize(cast<StringAttr>(axis).getValue());
  if (result.getDimSize(dim) != input.getDimSize(dim) * group)
    entry["size"] = result.getDimSize(dim);
}

LogicalResult GraphExporter::exportOp(Operation *op, OrderedJson &entry) {
  // Unregistered ops have no dialect.
  std::optional<OpFields> fields = getOpFields(op->getName());
  if (!isa_and_present<ShardcDialect>(op->getDialect()) || !fields ||
      isa<MeshOp>(op) || op->getNumResults() != 1 ||
      op->getNumRegions() != 0)
    return op->emitError() << "'" << op->getName()
                           << "' cannot be expressed in a JSON graph";
  if (failed(checkType(op, op->getResult(0).getType(), "the result")))
    return failure();
  entry["op"] = op->getName().stripDialect().str();
  if (fields->numOperands != 0) {
    OrderedJson inputs = OrderedJson::array();
    for (Value operand : op->getOperands()) {
      auto it = names.find(operand);
      if (it == names.end())
        return op->emitError("uses a value defined outside the exported "
                             "function's body");
      inputs.push_back(it->second);
    }
    entry["inputs"] = std::move(inputs);
  }
  entry["output"] = names[op->getResult(0)];
  if (failed(exportOpFields(op, *fields, entry)))
    return failure();
  exportConcatenatedSize(op, entry);
  // On an op whose own attribute is "sharding" (sharding_constraint), an
  // annotation of its result goes under its own name.
  bool constraint = llvm::any_of(fields->attrs, [](const OpField &f) {
    return f.name == "sharding";
  });
  for (NamedAttribute attr : op->getDiscardableAttrs()) {
    if (attr.getName() == ShardcDialect::getStageAttrName()) {
      entry["stage"] = cast<IntegerAttr>(attr.getValue()).getInt();
      continue;
    }
    if (attr.getName() != ShardcDialect::getShardingAttrName())
      return op->emitError() << "attribute '" << attr.getName().getValue()
                             << "' cannot be expressed in a JSON graph";
    if (failed(putSharding(op, attr.getValue(), entry,
                           constraint ? "result_sharding" : "sharding",
                           constraint ? "result_partial" : "partial")))
      return failure();
  }
  return success();
}

LogicalResult GraphExporter::exportOutputs(func::FuncOp func,
                                           OrderedJson &graph) {
  Operation *terminator = func.getBody().front().getTerminator();
  auto ret = dyn_cast_or_null<func::ReturnOp>(terminator);
  if (!ret)
    return func.emitError("the function must end in func.return");
  OrderedJson outputs = OrderedJson::array();
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    auto it = names.find(value);
    if (it == names.end())
      return ret.emitError("returns a value defined outside the function");
    OrderedJson entry = {{"name", it->second}};
    DictionaryAttr resultAttrs = func.getResultAttrDict(i);
    for (NamedAttribute attr : attrsOf(resultAttrs)) {
      if (attr.getName() == ShardcDialect::getGradientOfAttrName() ||
          attr.getName() == ShardcDialect::getNextAttrName() ||
          attr.getName() == getGlobalShapeAttrName())
        continue; // after the sharding
      if (attr.getName() != ShardcDialect::getShardingAttrName())
        return func.emitError()
               << "attribute '" << attr.getName().getValue() << "' of result #"
               << i << " cannot be expressed in a JSON graph";
      if (failed(putSharding(func, attr.getValue(), entry)))
        return failure();
    }
    if (resultAttrs)
      for (StringRef role : {"gradient_of", "next"})
        if (auto of = resultAttrs.getAs<StringAttr>(
                role == "next" ? ShardcDialect::getNextAttrName()
                               : ShardcDialect::getGradientOfAttrName()))
          entry[role.str()] = of.getValue().str();
    if (resultAttrs)
      if (auto shape = resultAttrs.getAs<DenseI64ArrayAttr>(
              getGlobalShapeAttrName()))
        entry["global_shape"] = std::vector<int64_t>(shape.asArrayRef().begin(),
                                                     shape.asArrayRef().end());
    outputs.push_back(std::move(entry));
  }
  graph["outputs"] = std::move(outputs);
  return success();
}

LogicalResult GraphExporter::run(OrderedJson &graph) {
  graph = OrderedJson::object();
  if (failed(exportMesh(graph)))
    return failure();
  FailureOr<func::FuncOp> func = findFunction();
  if (failed(func))
    return failure();
  if ((*func)->hasAttr(ShardcDialect::getSpmdAttrName()))
    graph["spmd"] = true;
  nameValues(*func);
  if (failed(exportInputs(*func, graph)))
    return failure();
  OrderedJson ops = OrderedJson::array();
  for (Operation &op : func->getBody().front().without_terminator())
    if (failed(exportOp(&op, ops.emplace_back())))
      return failure();
  graph["ops"] = std::move(ops);
  return exportOutputs(*func, graph);
}

LogicalResult shardc::exportJsonGraph(ModuleOp module, llvm::raw_ostream &os) {
  // The format leaves result types to inference, so only a module that
  // verifies exports to a graph that imports back to the same module.
  if (failed(verify(module)))
    return failure();
  OrderedJson graph;
  if (failed(GraphExporter(module).run(graph)))
    return failure();
  writeJson(graph, os);
  return success();
}
