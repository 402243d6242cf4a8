//===- JsonImporter.cpp - JSON graph to a shardc module -------------------===//
//
// Order of work: reject what cannot be parsed safely (empty, too deep,
// malformed), then check the document's structure entry by entry, sort the
// ops by their data dependences (files may list ops in any order), build,
// and verify. Every failure is a diagnostic at the entry's line and column;
// nothing is asserted, since assertions are compiled out.
//
//===----------------------------------------------------------------------===//

#include "shardc/Import/JsonImporter.h"

#include "ImportState.h"

#include "shardc/Dialect/UnevenDims.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <functional>
#include <queue>

using namespace mlir;
using namespace shardc;
using namespace shardc::jsonimport;
using llvm::SmallVector;
using llvm::StringRef;

LogicalResult
shardc::jsonimport::reportAtEntries(ImportState &state, FileLineColLoc fallback,
                                    llvm::function_ref<LogicalResult()> fn,
                                    llvm::function_ref<std::string()> note) {
  struct Captured {
    DiagnosticSeverity severity;
    Location loc;
    std::string message;
    SmallVector<std::pair<Location, std::string>> notes;
  };
  SmallVector<Captured> captured;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler handler(state.ctx, [&](Diagnostic &diag) {
      Captured c{diag.getSeverity(), diag.getLocation(), diag.str(), {}};
      // The generic-form op MLIR's verifier appends is IR, which means
      // nothing to someone reading the JSON file.
      for (Diagnostic &n : diag.getNotes())
        if (!StringRef(n.str()).starts_with("see current operation"))
          c.notes.push_back({n.getLocation(), n.str()});
      captured.push_back(std::move(c));
      return success();
    });
    result = fn();
  }
  for (Captured &c : captured) {
    FileLineColLoc at = findFileLoc(c.loc);
    if (!at)
      at = fallback;
    InFlightDiagnostic diag = [&] {
      switch (c.severity) {
      case DiagnosticSeverity::Warning:
        return emitWarning(at);
      case DiagnosticSeverity::Remark:
        return emitRemark(at);
      default:
        return emitError(at);
      }
    }();
    if (std::string path = state.pathOf(at); !path.empty())
      diag << path << ": ";
    diag << c.message;
    for (auto &[loc, text] : c.notes) {
      FileLineColLoc noteAt = findFileLoc(loc);
      diag.attachNote(noteAt ? Location(noteAt) : Location(at)) << text;
    }
    if (note && c.severity == DiagnosticSeverity::Error)
      if (std::string text = note(); !text.empty())
        diag.attachNote(at) << text;
  }
  return result;
}

namespace {
/// One named value of the graph: a graph input or an op output.
struct Definition {
  /// The entry that defines it.
  JVal entry;
  /// Index into the ops, or -1 for a graph input.
  int op = -1;
};

/// An entry of "inputs" or "outputs" must be an object with a "name":
/// returns the name and renames `entry` so its errors read
/// `inputs[3] (name "x")`.
static FailureOr<std::string> readNamedEntry(JVal &entry) {
  if (!entry->is_object())
    return entry.error() << "must be an object, got " << describe(entry.get());
  if (!entry.field("name").present())
    return entry.error() << "missing required field \"name\"";
  FailureOr<std::string> name = readName(entry.field("name"));
  if (failed(name))
    return failure();
  entry = entry.renamed("name", *name);
  return name;
}

class GraphImporter {
public:
  GraphImporter(ImportState &st, const JVal &root) : st(st), root(root) {}
  OwningOpRef<ModuleOp> run();

private:
  LogicalResult readMesh();
  /// Reads the inputs and creates @main with them as arguments.
  FailureOr<func::FuncOp> readInputs();
  FailureOr<SmallVector<size_t>> sortOps();
  LogicalResult reportCycle(const SmallVector<int> &indegree);
  LogicalResult readOutputs(func::FuncOp func);
  /// Records a definition of `name` by entry `at`, failing on a second one.
  LogicalResult define(const JVal &at, const std::string &name, int op);
  /// The op defining `name`, or -1 for a graph input (or an unknown name).
  int producerOf(StringRef name) const {
    auto it = defs.find(name);
    return it == defs.end() ? -1 : it->second.op;
  }
  /// ` (did you mean "x"?)` over every defined name.
  std::string suggestValue(StringRef name) const;

  ImportState &st;
  JVal root;
  llvm::StringMap<Definition> defs;
  llvm::StringMap<Value> values;
  SmallVector<OpEntry, 0> ops;
};
} // namespace

LogicalResult GraphImporter::define(const JVal &at, const std::string &name,
                                    int op) {
  auto [it, inserted] = defs.try_emplace(name, Definition{at, op});
  if (!inserted)
    return at.error() << "value \"" << printable(name)
                      << "\" is already defined by " << it->second.entry.path()
                      << "; value names must be unique";
  return success();
}

std::string GraphImporter::suggestValue(StringRef name) const {
  SmallVector<StringRef> names;
  for (const auto &d : defs)
    names.push_back(d.getKey());
  llvm::sort(names); // a deterministic hint when two are equally close
  return suggest(name, names);
}

LogicalResult GraphImporter::readMesh() {
  JVal mesh = root.field("mesh");
  if (failed(checkFields(mesh, {"name", "axes"}, {"name", "axes"})))
    return failure();
  FailureOr<std::string> name = readName(mesh.field("name"));
  if (failed(name))
    return failure();
  JVal axes = mesh.field("axes");
  if (!axes->is_array() || axes->empty())
    return axes.error() << "must be a non-empty list of [name, size] pairs, "
                           "got "
                        << describe(axes.get());
  MeshInfo &info = st.mesh;
  info.name = *name;
  int64_t devices = 1;
  for (size_t i = 0, e = axes->size(); i < e; ++i) {
    JVal axis = axes.at(i);
    if (!axis->is_array() || axis->size() != 2)
      return axis.error() << "must be a [name, size] pair, got "
                          << describe(axis.get());
    FailureOr<std::string> axisName = readName(axis.at(0));
    if (failed(axisName))
      return failure();
    FailureOr<int64_t> size = readInt(axis.at(1));
    if (failed(size))
      return failure();
    if (*size < 1)
      return axis.at(1).error()
             << "axis \"" << printable(*axisName) << "\" has size " << *size
             << "; sizes must be at least 1";
    if (info.axisSize(*axisName) >= 0)
      return axis.at(0).error()
             << "axis \"" << printable(*axisName) << "\" is declared twice";
    constexpr int64_t kMaxDevices = int64_t(1) << 20;
    if (*size > kMaxDevices || devices * *size > kMaxDevices)
      return axis.at(1).error()
             << "the mesh has more than 2^20 devices "
                "(axis \""
             << printable(*axisName) << "\" of size " << *size << ")";
    devices *= *size;
    info.axes.push_back(*axisName);
    info.sizes.push_back(*size);
  }
  SmallVector<StringRef> names(info.axes.begin(), info.axes.end());
  OpBuilder &b = st.builder;
  info.op = MeshOp::create(b, mesh.loc(), b.getStringAttr(info.name),
                           b.getStrArrayAttr(names),
                           b.getDenseI64ArrayAttr(info.sizes));
  info.ref = FlatSymbolRefAttr::get(st.ctx, info.name);
  return success();
}

FailureOr<func::FuncOp> GraphImporter::readInputs() {
  JVal inputs = root.field("inputs");
  if (!inputs->is_array())
    return inputs.error() << "must be a list of input objects, got "
                          << describe(inputs.get());
  // All inputs are read before the function exists: its argument attributes
  // are stored per argument of its type, so the type must be complete first.
  struct Input {
    std::string name;
    Type type;
    Location loc;
    ShardingAttr sharding;
    bool param;
    std::optional<double> optimizerState;
  };
  SmallVector<Input> read;
  for (size_t i = 0, e = inputs->size(); i < e; ++i) {
    JVal entry = inputs.at(i);
    FailureOr<std::string> name = readNamedEntry(entry);
    if (failed(name))
      return failure();
    if (failed(checkFields(entry,
                           {"name", "shape", "dtype", "sharding", "partial",
                            "param", "optimizer_state"},
                           {"name", "shape"})) ||
        failed(define(entry, *name, -1)))
      return failure();
    FailureOr<SmallVector<int64_t>> shape = readShape(entry.field("shape"));
    if (failed(shape))
      return failure();
    FailureOr<Type> dtype = readDtype(entry.field("dtype"));
    if (failed(dtype))
      return failure();
    auto type = RankedTensorType::get(*shape, *dtype);
    JVal shardingField = entry.field("sharding");
    FailureOr<ShardingAttr> sharding =
        readSharding(shardingField, entry.field("partial"));
    if (failed(sharding) ||
        (*sharding && failed(checkShardingFits(shardingField, *sharding, type,
                                               "input \"" + *name + "\""))))
      return failure();
    bool param = false;
    if (JVal paramField = entry.field("param"); paramField.present()) {
      FailureOr<bool> flag = readBool(paramField);
      if (failed(flag))
        return failure();
      param = *flag;
    }
    std::optional<double> optimizerState;
    if (JVal stateField = entry.field("optimizer_state");
        stateField.present()) {
      const JsonNode &node = stateField.get();
      if (!node.is_number())
        return stateField.error()
               << "must be a number (the state's initial value), got "
               << describe(node);
      optimizerState = node.is_number_float()      ? node.getFloat()
                       : node.is_number_unsigned() ? double(node.getUnsigned())
                                                   : double(node.getInteger());
    }
    Location loc = NameLoc::get(st.builder.getStringAttr(*name), entry.loc());
    read.push_back({*name, type, loc, *sharding, param, optimizerState});
  }

  OpBuilder &b = st.builder;
  SmallVector<Type> types;
  for (const Input &input : read)
    types.push_back(input.type);
  auto func = func::FuncOp::create(b, root.loc(), "main",
                                   FunctionType::get(st.ctx, types, {}));
  if (st.spmd)
    func->setAttr(ShardcDialect::getSpmdAttrName(), b.getUnitAttr());
  Block *body = &func.getBody().emplaceBlock();
  // All argument attributes are set at once: setArgAttr rebuilds the whole
  // list each time, which made importing N inputs O(N^2).
  SmallVector<DictionaryAttr> argAttrs;
  for (const Input &input : read) {
    values[input.name] = body->addArgument(input.type, input.loc);
    NamedAttrList attrs;
    attrs.append(st.nameAttrName, b.getStringAttr(input.name));
    if (input.sharding)
      attrs.append(st.shardingAttrName, input.sharding);
    if (input.param)
      attrs.append(st.paramAttrName, b.getUnitAttr());
    if (input.optimizerState)
      attrs.append(ShardcDialect::getOptimizerStateAttrName(),
                   b.getFloatAttr(getElementTypeOrSelf(input.type),
                                  *input.optimizerState));
    argAttrs.push_back(attrs.getDictionary(st.ctx));
  }
  func.setAllArgAttrs(argAttrs);
  return func;
}

LogicalResult GraphImporter::reportCycle(const SmallVector<int> &indegree) {
  // Every op left over waits on another op left over, so walking from one
  // of them along such dependences must come back to an op already seen.
  auto waitsOn = [&](size_t i) -> int {
    for (const std::string &input : ops[i].inputs) {
      int producer = producerOf(input);
      if (producer >= 0 && indegree[producer] > 0)
        return producer;
    }
    return -1;
  };
  size_t start = 0;
  while (start < ops.size() && indegree[start] == 0)
    ++start;
  SmallVector<int> path;
  llvm::DenseMap<int, size_t> seenAt;
  for (int cur = static_cast<int>(start); cur >= 0; cur = waitsOn(cur)) {
    auto [it, fresh] = seenAt.try_emplace(cur, path.size());
    if (!fresh) {
      // path[it->second..] is the cycle, each op using the next one.
      // Print it in the direction data flows, from the op listed first.
      SmallVector<int> cycle(path.rbegin(), path.rend() - it->second);
      auto first = llvm::min_element(cycle);
      std::rotate(cycle.begin(), first, cycle.end());
      InFlightDiagnostic diag = ops[cycle.front()].entry.error()
                                << "ops form a cycle: ";
      for (int op : cycle)
        diag << "\"" << printable(ops[op].output) << "\" -> ";
      diag << "\"" << printable(ops[cycle.front()].output)
           << "\" (each value is computed from the one before it)";
      return diag;
    }
    path.push_back(cur);
  }
  return ops[start].entry.error() << "ops cannot be ordered";
}

FailureOr<SmallVector<size_t>> GraphImporter::sortOps() {
  // Kahn's algorithm, always taking the ready op listed first: a file that
  // is already in order keeps its order, so import then export is stable.
  SmallVector<int> indegree(ops.size(), 0);
  SmallVector<SmallVector<size_t>> users(ops.size());
  for (auto [i, op] : llvm::enumerate(ops))
    for (const std::string &input : op.inputs)
      if (int producer = producerOf(input); producer >= 0) {
        ++indegree[i];
        users[producer].push_back(i);
      }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < ops.size(); ++i)
    if (indegree[i] == 0)
      ready.push(i);
  SmallVector<size_t> order;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t user : users[i])
      if (--indegree[user] == 0)
        ready.push(user);
  }
  if (order.size() != ops.size())
    return reportCycle(indegree);
  return order;
}

LogicalResult GraphImporter::readOutputs(func::FuncOp func) {
  JVal outputs = root.field("outputs");
  if (!outputs->is_array() || outputs->empty())
    return outputs.error() << "must be a non-empty list of output objects, "
                              "got "
                           << describe(outputs.get());
  SmallVector<Value> results;
  SmallVector<ShardingAttr> shardings;
  SmallVector<DictionaryAttr> outputRoles;
  for (size_t i = 0, e = outputs->size(); i < e; ++i) {
    JVal entry = outputs.at(i);
    FailureOr<std::string> name = readNamedEntry(entry);
    if (failed(name))
      return failure();
    if (failed(checkFields(
            entry,
            {"name", "sharding", "partial", "gradient_of", "next",
             "global_shape"},
            {"name"})))
      return failure();
    NamedAttrList roles;
    // A partitioned program's uneven result: its global shape
    // (docs/sharding.md#uneven-dims).
    if (JVal field = entry.field("global_shape"); field.present()) {
      if (!st.spmd)
        return field.error() << "only a partitioned (\"spmd\": true) "
                                "program gives an output's global shape";
      FailureOr<SmallVector<int64_t>> shape = readShape(field);
      if (failed(shape))
        return failure();
      roles.append(getGlobalShapeAttrName(),
                   DenseI64ArrayAttr::get(st.ctx, *shape));
    }
    for (StringRef role : {"gradient_of", "next"}) {
      JVal field = entry.field(role);
      if (!field.present())
        continue;
      FailureOr<std::string> of = readName(field);
      if (failed(of))
        return failure();
      Value input = values.lookup(*of);
      if (!input || !isa<BlockArgument>(input))
        return field.error()
               << "names no input \"" << printable(*of)
               << "\" (it says which input this output is the "
               << (role == "next" ? "next value" : "gradient") << " of)";
      roles.append(role == "next" ? ShardcDialect::getNextAttrName()
                                  : ShardcDialect::getGradientOfAttrName(),
                   st.builder.getStringAttr(*of));
    }
    Value value = values.lookup(*name);
    if (value && roles.get(getGlobalShapeAttrName()) &&
        cast<DenseI64ArrayAttr>(roles.get(getGlobalShapeAttrName())).size() !=
            cast<RankedTensorType>(value.getType()).getRank())
      return entry.field("global_shape").error()
             << "has one size per dim of output \"" << printable(*name)
             << "\", which has rank "
             << cast<RankedTensorType>(value.getType()).getRank();
    if (!value)
      return entry.field("name").error()
             << "names no input or op output \"" << printable(*name) << "\""
             << suggestValue(*name);
    JVal shardingField = entry.field("sharding");
    FailureOr<ShardingAttr> sharding =
        readSharding(shardingField, entry.field("partial"));
    if (failed(sharding) ||
        (*sharding &&
         failed(checkShardingFits(shardingField, *sharding, value.getType(),
                                  "output \"" + *name + "\""))))
      return failure();
    results.push_back(value);
    shardings.push_back(*sharding);
    outputRoles.push_back(roles.getDictionary(st.ctx));
  }
  func::ReturnOp::create(st.builder, outputs.loc(), results);
  func.setFunctionType(FunctionType::get(st.ctx, func.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  SmallVector<DictionaryAttr> resultAttrs;
  for (auto [sharding, roles] : llvm::zip(shardings, outputRoles)) {
    NamedAttrList attrs(roles);
    if (sharding)
      attrs.append(st.shardingAttrName, sharding);
    resultAttrs.push_back(attrs.getDictionary(st.ctx));
  }
  func.setAllResultAttrs(resultAttrs);
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  if (!root->is_object()) {
    root.error() << "a JSON graph must be an object with fields \"mesh\", "
                    "\"inputs\", \"ops\" and \"outputs\", got "
                 << describe(root.get());
    return nullptr;
  }
  if (failed(checkFields(
          root, {"mesh", "spmd", "inputs", "ops", "outputs", "$schema"},
          {"mesh", "inputs", "ops", "outputs"})))
    return nullptr;
  if (JVal schema = root.field("$schema");
      schema.present() && failed(readString(schema)))
    return nullptr;
  if (JVal spmd = root.field("spmd"); spmd.present()) {
    FailureOr<bool> flag = readBool(spmd);
    if (failed(flag))
      return nullptr;
    st.spmd = *flag;
  }

  FileLineColLoc rootLoc = root.loc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(rootLoc);
  OpBuilder &b = st.builder;
  b.setInsertionPointToEnd(module->getBody());
  if (failed(readMesh()))
    return nullptr;
  FailureOr<func::FuncOp> func = readInputs();
  if (failed(func))
    return nullptr;

  JVal opList = root.field("ops");
  if (!opList->is_array()) {
    opList.error() << "must be a list of op objects, got "
                   << describe(opList.get());
    return nullptr;
  }
  for (size_t i = 0, e = opList->size(); i < e; ++i) {
    FailureOr<OpEntry> op = readOpEntry(opList.at(i));
    if (failed(op) || failed(define(op->entry, op->output, i)))
      return nullptr;
    ops.push_back(std::move(*op));
  }
  for (const OpEntry &op : ops)
    for (auto [name, at] : llvm::zip(op.inputs, op.inputEntries))
      if (!defs.count(name)) {
        at.error() << "names no input or op output \"" << printable(name)
                   << "\"" << suggestValue(name);
        return nullptr;
      }
  FailureOr<SmallVector<size_t>> order = sortOps();
  if (failed(order))
    return nullptr;

  b.setInsertionPointToEnd(&func->getBody().front());
  for (size_t i : *order) {
    SmallVector<Value> operands;
    for (const std::string &name : ops[i].inputs)
      operands.push_back(values.lookup(name));
    FailureOr<Operation *> op = buildOp(ops[i], operands);
    if (failed(op))
      return nullptr;
    values[ops[i].output] = (*op)->getResult(0);
  }
  if (failed(readOutputs(*func)))
    return nullptr;
  // The op entries were verified one by one as they were built, and the
  // topological build order makes every operand dominate its use; what is
  // left unverified is what the importer built itself (meshes, the function,
  // its return) and the module's symbol table (duplicate symbols, collectives
  // naming a mesh). Verifying the whole module again would check every op a
  // second time.
  auto verifyRest = [&]() -> LogicalResult {
    for (Operation &op : *module->getBody())
      if (failed(verify(&op, /*verifyRecursively=*/false)))
        return failure();
    if (failed(verify(func->getBody().front().getTerminator(),
                      /*verifyRecursively=*/false)))
      return failure();
    return verify(*module, /*verifyRecursively=*/false);
  };
  if (failed(reportAtEntries(st, rootLoc, verifyRest)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp>
shardc::importJsonGraph(StringRef text, StringRef filename, MLIRContext *ctx) {
  ctx->getOrLoadDialect<ShardcDialect>();
  ctx->getOrLoadDialect<func::FuncDialect>();
  LineTable lines(text);
  auto textError = [&](const TextError &error, StringRef prefix) {
    auto [line, column] = lines.lineAndColumn(error.offset);
    emitError(FileLineColLoc::get(ctx, filename, line, column))
        << prefix << error.message;
    return nullptr;
  };
  StringRef content = text;
  if (content.starts_with("\xEF\xBB\xBF"))
    content = content.drop_front(3);
  if (content.trim(" \t\r\n").empty())
    return textError({0, "the file is empty; expected a JSON graph object"},
                     "");
  if (std::optional<TextError> e = checkNesting(text, kMaxNestingDepth))
    return textError(*e, "");
  JsonDocument document;
  std::optional<TextError> readError = document.read(text);
  if (!document.wellFormed()) {
    // nlohmann explains syntax errors; if it accepts what the reader stopped
    // at after all, the text is read again without the reader's check.
    if (std::optional<TextError> e = validateJson(text))
      return textError(*e, "invalid JSON: ");
    readError = document.readValidated(text);
  }
  if (readError)
    return textError(*readError, "");

  ImportState st(ctx, filename, text, document);
  return GraphImporter(st, JVal::root(st)).run();
}
