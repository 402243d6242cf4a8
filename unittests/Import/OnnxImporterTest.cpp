//===- OnnxImporterTest.cpp - ONNX models built in C++ --------------------===//

#include "shardc/Import/OnnxImporter.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <random>

using namespace mlir;

namespace {

void addValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> *list,
              const std::string &name, std::vector<int64_t> shape,
              int32_t type = onnx::TensorProto::FLOAT) {
  onnx::ValueInfoProto *v = list->Add();
  v->set_name(name);
  auto *t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(type);
  for (int64_t d : shape)
    t->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto *addNode(onnx::GraphProto *g, const std::string &op,
                         std::vector<std::string> inputs,
                         std::vector<std::string> outputs) {
  onnx::NodeProto *n = g->add_node();
  n->set_op_type(op);
  n->set_name("/" + op);
  for (auto &i : inputs)
    n->add_input(i);
  for (auto &o : outputs)
    n->add_output(o);
  return n;
}

/// The graph of `m`, made an opset-17 model as torch writes them.
onnx::GraphProto *startModel(onnx::ModelProto &m) {
  m.set_ir_version(8);
  auto *opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  return m.mutable_graph();
}

/// relu(x @ fc.weight + fc.bias) reshaped to [x.shape[0] * 2, -1] through
/// a Shape -> Gather -> Mul -> Concat subgraph, as torch writes it.
std::string exampleModel() {
  onnx::ModelProto m;
  onnx::GraphProto *g = startModel(m);
  addValue(g->mutable_input(), "x", {4, 6});
  onnx::TensorProto *w = g->add_initializer();
  w->set_name("fc.weight");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(6);
  w->add_dims(8);
  for (int i = 0; i < 48; ++i)
    w->add_float_data(0.01f * i);
  onnx::TensorProto *b = g->add_initializer();
  b->set_name("fc.bias");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(8);
  for (int i = 0; i < 8; ++i)
    b->add_float_data(-0.5f + i);
  onnx::TensorProto *two = g->add_initializer();
  two->set_name("two");
  two->set_data_type(onnx::TensorProto::INT64);
  two->add_dims(1);
  two->add_int64_data(2);
  onnx::TensorProto *minusOne = g->add_initializer();
  minusOne->set_name("minus_one");
  minusOne->set_data_type(onnx::TensorProto::INT64);
  minusOne->add_dims(1);
  minusOne->add_int64_data(-1);
  onnx::TensorProto *zero = g->add_initializer();
  zero->set_name("zero");
  zero->set_data_type(onnx::TensorProto::INT64);
  zero->add_int64_data(0);
  addNode(g, "MatMul", {"x", "fc.weight"}, {"h"});
  addNode(g, "Add", {"h", "fc.bias"}, {"hb"});
  addNode(g, "Relu", {"hb"}, {"u"});
  addNode(g, "Shape", {"x"}, {"shape"});
  addNode(g, "Gather", {"shape", "zero"}, {"rows"});
  addNode(g, "Unsqueeze", {"rows", "zero_axes"}, {"rows1"});
  // Unsqueeze's axes: a Constant node.
  onnx::NodeProto *axes = g->add_node();
  axes->set_op_type("Constant");
  axes->add_output("zero_axes");
  onnx::AttributeProto *value = axes->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(0);
  // The Constant must come before its user: move it to the front.
  auto *nodes = g->mutable_node();
  for (int i = nodes->size() - 1; i > 0; --i)
    nodes->SwapElements(i, i - 1);
  addNode(g, "Mul", {"rows1", "two"}, {"rows2"});
  addNode(g, "Concat", {"rows2", "minus_one"}, {"target"})
      ->add_attribute()
      ->CopyFrom([] {
        onnx::AttributeProto a;
        a.set_name("axis");
        a.set_type(onnx::AttributeProto::INT);
        a.set_i(0);
        return a;
      }());
  addNode(g, "Reshape", {"u", "target"}, {"y"});
  addValue(g->mutable_output(), "y", {8, 4});
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

struct Context {
  Context() {
    ctx.getOrLoadDialect<shardc::ShardcDialect>();
    ctx.getOrLoadDialect<func::FuncDialect>();
  }
  MLIRContext ctx;
};

} // namespace

TEST(OnnxImporter, ParamsKeepTheirNamesAndShapeArithmeticFolds) {
  Context c;
  std::string errors;
  ScopedDiagnosticHandler handler(&c.ctx, [&](Diagnostic &d) {
    errors += d.str() + "\n";
    return success();
  });
  auto module = shardc::importOnnxModel(exampleModel(), "m.onnx", &c.ctx);
  ASSERT_TRUE(module) << errors;
  auto func = *module->getOps<func::FuncOp>().begin();
  ASSERT_EQ(func.getNumArguments(), 3u);
  EXPECT_EQ(func.getArgAttrOfType<StringAttr>(0, "shardc.name").getValue(),
            "x");
  EXPECT_FALSE(func.getArgAttr(0, "shardc.param"));
  EXPECT_EQ(func.getArgAttrOfType<StringAttr>(1, "shardc.name").getValue(),
            "fc.weight");
  EXPECT_TRUE(func.getArgAttr(1, "shardc.param"));
  EXPECT_EQ(func.getArgAttrOfType<StringAttr>(2, "shardc.name").getValue(),
            "fc.bias");
  // matmul (dot_general), the bias broadcast, add, relu, reshape: the
  // shape subgraph left no op behind.
  unsigned ops = 0, reshapes = 0;
  func.walk([&](Operation *op) {
    if (isa<func::ReturnOp, func::FuncOp>(op))
      return;
    ++ops;
    reshapes += isa<shardc::ReshapeOp>(op);
    EXPECT_FALSE((isa<shardc::ConcatenateOp, shardc::GatherOp>(op)));
  });
  EXPECT_EQ(ops, 5u) << [&] {
    std::string s;
    llvm::raw_string_ostream os(s);
    module->print(os);
    return s;
  }();
  EXPECT_EQ(reshapes, 1u);
  auto result = cast<RankedTensorType>(func.getResultTypes()[0]);
  EXPECT_EQ(result.getShape(), ArrayRef<int64_t>({8, 4}));
}

TEST(OnnxImporter, InitializersAreTheCheckpoint) {
  auto tensors = shardc::readOnnxInitializers(exampleModel());
  ASSERT_TRUE(bool(tensors)) << llvm::toString(tensors.takeError());
  ASSERT_EQ(tensors->size(), 2u); // the float ones only
  const shardc::Tensor &w = tensors->at("fc.weight");
  EXPECT_EQ(w.getShape(), ArrayRef<int64_t>({6, 8}));
  EXPECT_FLOAT_EQ(w.values()[47], 0.47f);
  EXPECT_FLOAT_EQ(tensors->at("fc.bias").values()[0], -0.5f);
}

TEST(OnnxImporter, DamagedFilesAreErrorsNotCrashes) {
  Context c;
  unsigned errors = 0;
  ScopedDiagnosticHandler handler(&c.ctx, [&](Diagnostic &) {
    ++errors;
    return success();
  });
  std::string good = exampleModel();
  // Every prefix, and single bytes overwritten at random: the importer
  // answers with a module or with diagnostics, never a crash (the
  // sanitizer build runs this too).
  for (size_t n = 0; n < good.size(); ++n) {
    unsigned before = errors;
    auto module = shardc::importOnnxModel(good.substr(0, n), "m.onnx", &c.ctx);
    EXPECT_TRUE(module || errors > before) << "prefix " << n;
    (void)shardc::readOnnxInitializers(good.substr(0, n)).takeError();
  }
  std::mt19937 rng(0);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes = good;
    for (int k = 0; k < 3; ++k)
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    unsigned before = errors;
    auto module = shardc::importOnnxModel(bytes, "m.onnx", &c.ctx);
    EXPECT_TRUE(module || errors > before) << "trial " << trial;
    if (auto t = shardc::readOnnxInitializers(bytes); !t)
      llvm::consumeError(t.takeError());
  }
}

namespace {

onnx::TensorProto *addFloats(onnx::GraphProto *g, const std::string &name,
                             std::vector<int64_t> dims, float start) {
  onnx::TensorProto *t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i)
    t->add_float_data(start + i);
  return t;
}

/// where(mask == zero, (x @ w + pe) + pe2, -1) with pe2 torch's Identity
/// copy of the equal pe: mask and zero reach the output only through the
/// comparison (buffers by themselves), w, pe and pe2 where gradients flow.
/// With `constantPe`, pe's elements are all 1.
std::string bufferModel(bool constantPe = false) {
  onnx::ModelProto m;
  onnx::GraphProto *g = startModel(m);
  addValue(g->mutable_input(), "x", {2, 3});
  addFloats(g, "w", {3, 3}, 0);
  addFloats(g, "mask", {2, 3}, -2);
  addFloats(g, "zero", {}, 0);
  onnx::TensorProto *pe = addFloats(g, "pe", {2, 3}, 1);
  if (constantPe)
    for (int i = 0; i < pe->float_data_size(); ++i)
      pe->set_float_data(i, 1);
  onnx::NodeProto *fill = addNode(g, "Constant", {}, {"fill"});
  onnx::AttributeProto *value = fill->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_float_data(-1);
  addNode(g, "Equal", {"mask", "zero"}, {"cond"});
  addNode(g, "MatMul", {"x", "w"}, {"h"});
  addNode(g, "Add", {"h", "pe"}, {"h1"});
  addNode(g, "Identity", {"pe"}, {"pe2"});
  addNode(g, "Add", {"h1", "pe2"}, {"h2"});
  addNode(g, "Where", {"cond", "h2", "fill"}, {"y"});
  addValue(g->mutable_output(), "y", {2, 3});
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

std::vector<std::string> argumentNames(ModuleOp module) {
  auto func = *module.getOps<func::FuncOp>().begin();
  std::vector<std::string> names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    names.push_back(
        func.getArgAttrOfType<StringAttr>(i, "shardc.name").getValue().str());
  return names;
}

} // namespace

TEST(OnnxImporter, BuffersAreConstants) {
  Context c;
  std::string errors;
  ScopedDiagnosticHandler handler(&c.ctx, [&](Diagnostic &d) {
    errors += d.str() + "\n";
    return success();
  });
  auto found = shardc::importOnnxModel(bufferModel(), "m.onnx", &c.ctx);
  ASSERT_TRUE(found) << errors;
  EXPECT_EQ(argumentNames(*found),
            (std::vector<std::string>{"x", "w", "pe", "pe2"}));
  // A declared copy is the buffer it copies (torch wrote one value, as it
  // does for a table every layer registers): both are constants.
  shardc::OnnxImportOptions options;
  options.buffers = {"pe2"};
  auto declared =
      shardc::importOnnxModel(bufferModel(), "m.onnx", &c.ctx, options);
  ASSERT_TRUE(declared) << errors;
  EXPECT_EQ(argumentNames(*declared), (std::vector<std::string>{"x", "w"}));
  // The checkpoint holds the parameters only.
  auto tensors = shardc::readOnnxInitializers(bufferModel(), {"pe2"});
  ASSERT_TRUE(bool(tensors)) << llvm::toString(tensors.takeError());
  std::vector<std::string> names;
  for (const auto &entry : *tensors)
    names.push_back(entry.first);
  EXPECT_EQ(names, (std::vector<std::string>{"w"}));
  // A copy of a value whose elements are all equal (a weight of ones that
  // torch wrote once with a running_var) is declared alone.
  auto ones = shardc::importOnnxModel(bufferModel(/*constantPe=*/true),
                                      "m.onnx", &c.ctx, options);
  ASSERT_TRUE(ones) << errors;
  EXPECT_EQ(argumentNames(*ones), (std::vector<std::string>{"x", "w", "pe"}));
}

TEST(OnnxImporter, BufferNamesMustBeInitializers) {
  Context c;
  for (auto [name, message] :
       {std::pair<std::string, std::string>{
            "h", "buffer \"h\" names no initializer of the model (its float "
                 "initializers: \"w\", \"mask\", \"zero\", \"pe\", \"pe2\")"},
        {"x", "buffer \"x\" is a graph input, not an initializer"}}) {
    std::string errors;
    ScopedDiagnosticHandler handler(&c.ctx, [&](Diagnostic &d) {
      errors += d.str() + "\n";
      return success();
    });
    shardc::OnnxImportOptions options;
    options.buffers = {name};
    EXPECT_FALSE(
        shardc::importOnnxModel(bufferModel(), "m.onnx", &c.ctx, options));
    EXPECT_NE(errors.find(message), std::string::npos) << errors;
    auto tensors = shardc::readOnnxInitializers(bufferModel(), {name});
    ASSERT_FALSE(bool(tensors));
    EXPECT_NE(llvm::toString(tensors.takeError()).find(message),
              std::string::npos);
  }
}
