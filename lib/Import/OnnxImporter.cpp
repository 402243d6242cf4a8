//===- OnnxImporter.cpp - ONNX model to a shardc module -------------------===//
//
// Order of work: parse the protobuf (hostile bytes fail the parse, they do
// not crash it), check the opset, turn initializers and graph inputs into
// the function's arguments or host tensors, convert the nodes in file order
// (ONNX requires topological order; a node using a value defined later is a
// cycle or a misordered file), return the graph's outputs, and verify.
//
//===----------------------------------------------------------------------===//

#include "shardc/Import/OnnxImporter.h"

#include "OnnxImport.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Endian.h"

#include <climits>
#include <cstring>

using namespace mlir;
using namespace shardc;
using namespace shardc::onnximport;
using llvm::SmallVector;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// OnnxImporter
//===----------------------------------------------------------------------===//

Location OnnxImporter::fileLoc() {
  return FileLineColLoc::get(ctx, filename, 0, 0);
}

Value OnnxImporter::materialize(OnnxValue &v, Location loc) {
  if (v.value)
    return v.value;
  DenseElementsAttr attr = v.constant->toAttr();
  OperationState state(loc, ConstantOp::getOperationName());
  state.addAttribute("value", attr);
  state.addTypes(attr.getType());
  v.value = builder.create(state)->getResult(0);
  return v.value;
}

/// The Identity nodes that copy a float initializer, by output name, with
/// the initializer they copy. torch.onnx.export keeps one initializer for
/// parameters of equal values (LayerNorm's initial ones and zeros) and
/// names the others with Identity nodes; in the model they are separate
/// parameters that training moves apart, so each copy is a parameter of
/// its own, starting from the value it copies.
static llvm::StringMap<std::string>
parameterCopies(const onnx::GraphProto &graph) {
  llvm::StringSet<> floats, taken;
  for (const onnx::TensorProto &init : graph.initializer()) {
    taken.insert(init.name());
    if (init.data_type() == onnx::TensorProto::FLOAT)
      floats.insert(init.name());
  }
  for (const onnx::ValueInfoProto &input : graph.input())
    taken.insert(input.name());
  llvm::StringMap<std::string> copies;
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Identity" && node.input_size() == 1 &&
        node.output_size() == 1 && floats.contains(node.input(0)) &&
        !node.output(0).empty() && !taken.contains(node.output(0)) &&
        (node.domain().empty() || node.domain() == "ai.onnx"))
      if (taken.insert(node.output(0)).second)
        copies[node.output(0)] = node.input(0);
  return copies;
}

/// The float elements of an initializer whose data checkTensorData
/// accepted.
static std::vector<float> floatsOf(const onnx::TensorProto &init) {
  size_t n = 1;
  for (int64_t d : init.dims())
    n *= d;
  std::vector<float> values(n);
  if (init.has_raw_data()) {
    const char *p = init.raw_data().data();
    for (size_t i = 0; i < n; ++i) {
      uint32_t bits = llvm::support::endian::read32le(p + 4 * i);
      std::memcpy(&values[i], &bits, 4);
    }
  } else {
    for (size_t i = 0; i < n; ++i)
      values[i] = init.float_data(i);
  }
  return values;
}

namespace {
/// A float initializer torch computed from another at export.
struct TiedInitializer {
  std::string weight; ///< the initializer it holds the elements of
  bool transposed;    ///< as weight^T (a 2-D weight)
};
} // namespace

/// The float initializers that are a tied weight folded by torch: with
/// constant folding, a weight both looked up (an embedding) and used as
/// `x @ W.T` (a tied LM head) is written twice, W under its name and W^T
/// under a name torch made up (`onnx::MatMul_240`). Trained apart, the two
/// copies would untie and the gradient of W miss the head's part; so such
/// an initializer (named `onnx::...`, holding exactly another one's
/// elements or their transpose, not all equal, neither a buffer) is read
/// as that weight. Equal values by chance would need every element to
/// agree, which initial weights do not.
static llvm::StringMap<TiedInitializer>
tiedInitializers(const onnx::GraphProto &graph,
                 const llvm::StringSet<> &buffers) {
  llvm::StringMap<TiedInitializer> tied;
  SmallVector<const onnx::TensorProto *> folded, named;
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (init.data_type() != onnx::TensorProto::FLOAT ||
        buffers.contains(init.name()) || init.dims_size() < 1 ||
        init.dims_size() > 2)
      continue;
    if (llvm::Error e = checkTensorData(init)) {
      llvm::consumeError(std::move(e)); // reported where it is read
      continue;
    }
    (StringRef(init.name()).starts_with("onnx::") ? folded : named)
        .push_back(&init);
  }
  for (const onnx::TensorProto *f : folded) {
    std::vector<float> a = floatsOf(*f);
    if (a.size() < 2 || llvm::all_equal(a))
      continue;
    for (const onnx::TensorProto *w : named) {
      if (w->dims_size() != f->dims_size())
        continue;
      bool same = llvm::equal(w->dims(), f->dims());
      bool swapped = f->dims_size() == 2 && w->dims(0) == f->dims(1) &&
                     w->dims(1) == f->dims(0);
      if (!same && !swapped)
        continue;
      std::vector<float> b = floatsOf(*w);
      if (same && std::memcmp(a.data(), b.data(), 4 * a.size()) == 0) {
        tied[f->name()] = {w->name(), false};
        break;
      }
      if (!swapped)
        continue;
      int64_t rows = w->dims(0), cols = w->dims(1);
      bool equal = true;
      for (int64_t r = 0; r < rows && equal; ++r)
        for (int64_t c = 0; c < cols && equal; ++c)
          equal = std::memcmp(&b[r * cols + c], &a[c * rows + r], 4) == 0;
      if (equal) {
        tied[f->name()] = {w->name(), true};
        break;
      }
    }
  }
  return tied;
}

namespace {

/// The model-level work: opsets, arguments, node order, outputs.
class ModelImporter {
public:
  ModelImporter(MLIRContext *ctx, StringRef filename,
                const OnnxImportOptions &options)
      : ctx(ctx), builder(ctx), imp(ctx, filename, builder), options(options) {
  }

  OwningOpRef<ModuleOp> run(StringRef bytes);

private:
  InFlightDiagnostic error() { return emitError(imp.fileLoc()); }
  LogicalResult readOpset(const onnx::ModelProto &model);
  FailureOr<func::FuncOp> readArguments(const onnx::GraphProto &graph);
  LogicalResult readNodes(const onnx::GraphProto &graph);
  LogicalResult readOutputs(const onnx::GraphProto &graph, func::FuncOp func);

  MLIRContext *ctx;
  OpBuilder builder;
  OnnxImporter imp;
  const OnnxImportOptions &options;
  /// parameterCopies() of the graph.
  llvm::StringMap<std::string> copies;
  /// The float initializers (and copies) made constants, in file order:
  /// the module's `shardc.buffers`.
  SmallVector<Attribute> bufferNames;
};

} // namespace

LogicalResult ModelImporter::readOpset(const onnx::ModelProto &model) {
  std::optional<int64_t> version;
  for (const onnx::OperatorSetIdProto &set : model.opset_import())
    if (set.domain().empty() || set.domain() == "ai.onnx")
      version = set.version();
  if (!version)
    return error() << "the model imports no opset of the default ONNX "
                      "domain; shardc reads opsets "
                   << kMinOpset << " to " << kMaxOpset;
  if (*version < kMinOpset || *version > kMaxOpset)
    return error() << "the model uses opset " << *version
                   << "; shardc reads opsets " << kMinOpset << " to "
                   << kMaxOpset
                   << " (torch.onnx.export(..., opset_version=17))";
  imp.opset = *version;
  return success();
}

/// What a graph input or output declares: its element type and static
/// shape, or a message saying why it has none.
static llvm::Expected<RankedTensorType>
declaredType(MLIRContext *ctx, const onnx::ValueInfoProto &info) {
  if (!info.has_type() || !info.type().has_tensor_type())
    return llvm::createStringError("is not a tensor");
  const onnx::TypeProto::Tensor &t = info.type().tensor_type();
  Type element = elementTypeOf(ctx, t.elem_type());
  if (!element)
    return llvm::createStringError(
        "has element type " + dataTypeName(t.elem_type()) +
        " (shardc reads FLOAT, INT64, INT32 and BOOL tensors)");
  if (!t.has_shape())
    return llvm::createStringError(
        "has no shape; shardc compiles static shapes");
  SmallVector<int64_t> dims;
  for (auto [i, dim] : llvm::enumerate(t.shape().dim())) {
    if (!dim.has_dim_value())
      return llvm::createStringError(
          "has a dynamic dim " + std::to_string(i) +
          (dim.has_dim_param() ? " (\"" + dim.dim_param() + "\")" : "") +
          "; shardc compiles static shapes (export without dynamic_axes)");
    dims.push_back(dim.dim_value());
  }
  llvm::Expected<SmallVector<int64_t>> shape = checkedShape(dims);
  if (!shape)
    return shape.takeError();
  return RankedTensorType::get(*shape, element);
}

FailureOr<func::FuncOp>
ModelImporter::readArguments(const onnx::GraphProto &graph) {
  if (graph.sparse_initializer_size() > 0)
    return error() << "the graph has sparse initializers, which shardc does "
                      "not read";
  struct Arg {
    std::string name;
    RankedTensorType type;
    bool param;
  };
  SmallVector<Arg> args;
  llvm::StringSet<> initializers;
  copies = parameterCopies(graph);
  llvm::Expected<llvm::StringSet<>> buffers =
      findBuffers(graph, copies, options.buffers);
  if (!buffers)
    return error() << llvm::toString(buffers.takeError());
  SmallVector<const onnx::TensorProto *> floats;
  llvm::StringMap<TiedInitializer> tied = tiedInitializers(graph, *buffers);
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (init.name().empty())
      return error() << "an initializer has no name";
    if (!initializers.insert(init.name()).second)
      return error() << "initializer \"" << init.name()
                     << "\" is defined twice";
    if (init.data_type() == onnx::TensorProto::FLOAT) {
      if (llvm::Error e = checkTensorData(init))
        return error() << "initializer \"" << init.name() << "\" "
                       << llvm::toString(std::move(e));
      floats.push_back(&init);
      continue;
    }
    // Integer and boolean initializers (masks, index tables) are constants,
    // folded where they feed shape arithmetic.
    llvm::Expected<HostTensor> t = decodeTensor(ctx, init);
    if (!t)
      return error() << "initializer \"" << init.name() << "\" "
                     << llvm::toString(t.takeError());
    auto type = RankedTensorType::get(t->shape, t->elementType);
    imp.values[init.name()] = OnnxValue{type, Value(), std::move(*t)};
  }
  llvm::StringSet<> inputs;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (initializers.contains(input.name()))
      continue; // an initializer listed as an input too (older exporters)
    if (input.name().empty())
      return error() << "a graph input has no name";
    if (!inputs.insert(input.name()).second)
      return error() << "graph input \"" << input.name()
                     << "\" is declared twice";
    llvm::Expected<RankedTensorType> type = declaredType(ctx, input);
    if (!type)
      return error() << "graph input \"" << input.name() << "\" "
                     << llvm::toString(type.takeError());
    args.push_back({input.name(), *type, false});
  }
  // Each copy of a parameter comes right after the parameter it copies.
  llvm::StringMap<SmallVector<std::string>> copiesOf;
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Identity" && node.output_size() == 1 &&
        copies.count(node.output(0)))
      copiesOf[node.input(0)].push_back(node.output(0));
  for (const onnx::TensorProto *init : floats) {
    if (tied.count(init->name()))
      continue; // read as the weight it holds, below
    SmallVector<std::string> names{init->name()};
    llvm::append_range(names, copiesOf.lookup(init->name()));
    SmallVector<int64_t> dims(init->dims().begin(), init->dims().end());
    auto type = RankedTensorType::get(dims, Float32Type::get(ctx));
    std::optional<HostTensor> value;
    for (const std::string &name : names) {
      // A float initializer is a weight: an input the user may set, train
      // and shard by name, its value read as a checkpoint. A buffer is a
      // constant, as integer initializers are (OnnxBuffers.cpp).
      if (!buffers->contains(name)) {
        args.push_back({name, type, true});
        continue;
      }
      bufferNames.push_back(builder.getStringAttr(name));
      if (!value) {
        llvm::Expected<HostTensor> t = decodeTensor(ctx, *init);
        if (!t)
          return error() << "buffer \"" << name << "\" "
                         << llvm::toString(t.takeError());
        value = std::move(*t);
      }
      imp.values[name] = OnnxValue{type, Value(), *value};
    }
  }

  SmallVector<Type> types;
  for (const Arg &a : args)
    types.push_back(a.type);
  auto func = func::FuncOp::create(builder, imp.fileLoc(), "main",
                                   FunctionType::get(ctx, types, {}));
  Block *body = &func.getBody().emplaceBlock();
  SmallVector<DictionaryAttr> argAttrs;
  for (const Arg &a : args) {
    Location loc = NameLoc::get(builder.getStringAttr(a.name), imp.fileLoc());
    Value v = body->addArgument(a.type, loc);
    imp.values[a.name] = OnnxValue{a.type, v, std::nullopt};
    NamedAttrList attrs;
    attrs.append(ShardcDialect::getNameAttrName(),
                 builder.getStringAttr(a.name));
    if (a.param)
      attrs.append(ShardcDialect::getParamAttrName(), builder.getUnitAttr());
    argAttrs.push_back(attrs.getDictionary(ctx));
  }
  func.setAllArgAttrs(argAttrs);
  builder.setInsertionPointToEnd(body);
  for (const onnx::TensorProto *init : floats) {
    auto it = tied.find(init->name());
    if (it == tied.end())
      continue;
    Location loc =
        NameLoc::get(builder.getStringAttr(init->name()), imp.fileLoc());
    Value weight = imp.values.find(it->second.weight)->second.value;
    if (it->second.transposed) {
      OperationState state(loc, "shardc.transpose");
      state.addOperands(weight);
      state.addAttribute("permutation", builder.getDenseI64ArrayAttr({1, 0}));
      auto type = cast<RankedTensorType>(weight.getType());
      state.addTypes(RankedTensorType::get(
          {type.getDimSize(1), type.getDimSize(0)}, type.getElementType()));
      weight = builder.create(state)->getResult(0);
    }
    // Its Identity copies, if any, are the same weight.
    SmallVector<std::string> names{init->name()};
    llvm::append_range(names, copiesOf.lookup(init->name()));
    for (const std::string &name : names)
      imp.values[name] = OnnxValue{cast<RankedTensorType>(weight.getType()),
                                   weight, std::nullopt};
    emitWarning(loc) << "holds the elements of '" << it->second.weight << "'"
                     << (it->second.transposed ? " transposed" : "")
                     << ": torch folded a tied weight into a copy, which "
                        "shardc reads as '"
                     << it->second.weight
                     << "' so that the two stay tied (one parameter)";
  }
  return func;
}

/// "Add, Cast, Concat, ..." for messages.
static std::string supportedOps() {
  SmallVector<StringRef> names;
  for (const auto &entry : converters())
    names.push_back(entry.getKey());
  llvm::sort(names);
  std::string s;
  for (auto [i, n] : llvm::enumerate(names))
    s += (i ? ", " : "") + n.str();
  return s;
}

LogicalResult ModelImporter::readNodes(const onnx::GraphProto &graph) {
  // Where each value is computed, to tell a value defined later (a cycle,
  // or a file out of order) from one defined nowhere.
  llvm::StringMap<size_t> producer;
  for (auto [i, node] : llvm::enumerate(graph.node()))
    for (const std::string &out : node.output())
      if (!out.empty())
        producer.try_emplace(out, i);
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    NodeContext nc(imp, node, i);
    // A parameter's copy is an argument already (parameterCopies).
    if (node.op_type() == "Identity" && node.output_size() == 1 &&
        copies.count(node.output(0)))
      continue;
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      return nc.error() << "is in domain \"" << node.domain()
                        << "\"; shardc reads the default ONNX domain";
    auto converter = converters().find(node.op_type());
    if (converter == converters().end())
      return nc.error() << "shardc does not support op type \""
                        << node.op_type() << "\"; it reads " << supportedOps();
    for (const std::string &in : node.input()) {
      if (in.empty() || imp.values.count(in))
        continue;
      auto p = producer.find(in);
      if (p != producer.end())
        return nc.error() << "uses \"" << in << "\" before node " << p->second
                          << " computes it: the graph is not in topological "
                             "order or has a cycle";
      return nc.error() << "uses \"" << in
                        << "\", which no graph input, initializer or node "
                           "defines";
    }
    for (const std::string &out : node.output())
      if (!out.empty() && imp.values.count(out))
        return nc.error() << "defines \"" << out
                          << "\", which is already defined";
    if (failed(converter->second(nc)))
      return failure();
    for (const std::string &out : node.output())
      if (!out.empty() && !imp.values.count(out))
        return nc.error() << "output \"" << out
                          << "\" is not computed by shardc's " << node.op_type()
                          << " (only its first output is)";
  }
  return success();
}

LogicalResult ModelImporter::readOutputs(const onnx::GraphProto &graph,
                                         func::FuncOp func) {
  if (graph.output_size() == 0)
    return error() << "the graph has no outputs";
  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &out : graph.output()) {
    auto it = imp.values.find(out.name());
    if (it == imp.values.end())
      return error() << "graph output \"" << out.name()
                     << "\" is computed by no node";
    Location loc =
        NameLoc::get(builder.getStringAttr(out.name()), imp.fileLoc());
    results.push_back(imp.materialize(it->second, loc));
  }
  func::ReturnOp::create(builder, imp.fileLoc(), results);
  func.setFunctionType(FunctionType::get(ctx, func.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  return success();
}

OwningOpRef<ModuleOp> ModelImporter::run(StringRef bytes) {
  if (bytes.empty()) {
    error() << "the file is empty; expected an ONNX model";
    return nullptr;
  }
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error() << "not an ONNX model: the protobuf does not parse (a truncated "
               "or corrupt file, or not ONNX)";
    return nullptr;
  }
  if (!model.has_graph()) {
    error() << "the model has no graph";
    return nullptr;
  }
  if (failed(readOpset(model)))
    return nullptr;
  OwningOpRef<ModuleOp> module = ModuleOp::create(imp.fileLoc());
  builder.setInsertionPointToEnd(module->getBody());
  // One device until a sharding plan gives the mesh (--plan).
  MeshOp::create(builder, imp.fileLoc(), builder.getStringAttr("mesh"),
                 builder.getStrArrayAttr({"data"}),
                 builder.getDenseI64ArrayAttr({1}));
  FailureOr<func::FuncOp> func = readArguments(model.graph());
  if (failed(func) || failed(readNodes(model.graph())) ||
      failed(readOutputs(model.graph(), *func)))
    return nullptr;
  rewriteExportIdioms(*func);
  // The model no longer shows which constants were initializers; a torch
  // state_dict still has their entries, which loaders must skip.
  if (!bufferNames.empty())
    (*module)->setAttr(ShardcDialect::getBuffersAttrName(),
                       builder.getArrayAttr(bufferNames));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp>
shardc::importOnnxModel(StringRef bytes, StringRef filename, MLIRContext *ctx,
                        const OnnxImportOptions &options) {
  ctx->getOrLoadDialect<ShardcDialect>();
  ctx->getOrLoadDialect<func::FuncDialect>();
  return ModelImporter(ctx, filename, options).run(bytes);
}

llvm::Expected<std::map<std::string, Tensor>>
shardc::readOnnxInitializers(StringRef bytes,
                             llvm::ArrayRef<std::string> declared) {
  onnx::ModelProto model;
  if (bytes.empty() || bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return llvm::createStringError(
        "not an ONNX model: the protobuf does not parse");
  llvm::StringMap<std::string> copies = parameterCopies(model.graph());
  llvm::Expected<llvm::StringSet<>> buffers =
      findBuffers(model.graph(), copies, declared);
  if (!buffers)
    return buffers.takeError();
  llvm::StringMap<TiedInitializer> tied =
      tiedInitializers(model.graph(), *buffers);
  std::map<std::string, Tensor> out;
  for (const onnx::TensorProto &init : model.graph().initializer()) {
    // A folded tied weight is no input: the weight it holds is.
    if (init.data_type() != onnx::TensorProto::FLOAT || tied.count(init.name()))
      continue;
    if (llvm::Error e = checkTensorData(init))
      return llvm::createStringError("initializer \"" + init.name() + "\" " +
                                     llvm::toString(std::move(e)));
    SmallVector<int64_t> dims(init.dims().begin(), init.dims().end());
    llvm::Expected<Tensor> t = Tensor::allocateUninitialized(dims);
    if (!t)
      return llvm::createStringError("initializer \"" + init.name() +
                                     "\": " + llvm::toString(t.takeError()));
    llvm::MutableArrayRef<float> values = t->values();
    if (init.has_raw_data()) {
      const char *p = init.raw_data().data();
      for (size_t i = 0; i < values.size(); ++i) {
        uint32_t bits = llvm::support::endian::read32le(p + 4 * i);
        std::memcpy(&values[i], &bits, 4);
      }
    } else {
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = init.float_data(i);
    }
    out[init.name()] = std::move(*t);
  }
  for (const auto &entry : copies)
    if (auto it = out.find(entry.getValue()); it != out.end())
      out[entry.getKey().str()] = it->second.clone();
  // The buffers are the model's constants: no input takes their values.
  for (const auto &buffer : *buffers)
    out.erase(buffer.getKey().str());
  return out;
}
