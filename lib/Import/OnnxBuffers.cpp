//===- OnnxBuffers.cpp - which float initializers are not trained ---------===//
//
// torch.onnx.export writes a module's registered buffers (a float causal
// mask, a positional-encoding table, BatchNorm's running statistics) as
// initializers, just as it writes its parameters: nothing in the file says
// which is which. A buffer trained as a parameter moves and the model
// diverges from PyTorch's, which never updates buffers; so a float
// initializer is a buffer (a constant) when
//
//   - it is certain: the initializer reaches the graph's outputs only
//     through positions no gradient flows through (a comparison's operand,
//     a Where condition, Gather indices, shape operands), or
//   - the user declares it (`--buffers`, `shardc.compile(buffers=)`).
//
// Everything else stays a parameter, as before: the declaration is needed
// wherever a buffer is added, multiplied or selected into the result.
//
//===----------------------------------------------------------------------===//

#include "OnnxImport.h"

#include "shardc/Import/ShardingPlan.h"

#include "llvm/ADT/StringSet.h"

#include <cstring>

using namespace shardc;
using namespace shardc::onnximport;
using llvm::StringRef;

/// Whether a gradient can flow from `node`'s outputs back to its input
/// `i`. Unknown op types answer yes: a parameter is never made a constant
/// by a guess.
static bool passesGradient(const onnx::NodeProto &node, int i) {
  StringRef op = node.op_type();
  // Boolean or integer results: nothing flows back through them.
  if (llvm::is_contained({"Equal", "Less", "LessOrEqual", "Greater",
                          "GreaterOrEqual", "Not", "And", "Or", "Xor",
                          "Shape", "Size", "ConstantOfShape", "ArgMax",
                          "ArgMin", "NonZero", "IsNaN", "IsInf"},
                         op))
    return false;
  if (op == "Cast") {
    for (const onnx::AttributeProto &a : node.attribute())
      if (a.name() == "to")
        return llvm::is_contained(
            {onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE,
             onnx::TensorProto::FLOAT16, onnx::TensorProto::BFLOAT16},
            a.i());
    return true;
  }
  if (op == "Where")
    return i != 0; // the condition
  if (op == "SoftmaxCrossEntropyLoss")
    return i != 1; // the labels
  // The data operand only: indices, shapes, axes, slice bounds.
  if (llvm::is_contained({"Gather", "GatherElements", "GatherND", "Reshape",
                          "Expand", "Slice", "Split", "Unsqueeze", "Squeeze",
                          "Tile", "ReduceMean", "ReduceSum", "ReduceMax",
                          "ReduceMin", "Dropout"},
                         op))
    return i == 0;
  return true;
}

/// Whether every element of a float initializer is the same (ones, zeros),
/// or its data is malformed (reported where it is read).
static bool allElementsEqual(const onnx::TensorProto &t) {
  if (llvm::Error e = checkTensorData(t)) {
    llvm::consumeError(std::move(e));
    return true;
  }
  int64_t n = t.has_raw_data() ? int64_t(t.raw_data().size() / 4)
                               : int64_t(t.float_data_size());
  for (int64_t i = 1; i < n; ++i) {
    bool same = t.has_raw_data() ? std::memcmp(t.raw_data().data() + 4 * i,
                                               t.raw_data().data(), 4) == 0
                                 : t.float_data(i) == t.float_data(0);
    if (!same)
      return false;
  }
  return true;
}

/// `"a", "b", "c"` for messages: at most eight names, then "...".
static std::string listNames(llvm::ArrayRef<std::string> names) {
  std::string s;
  for (auto [k, n] : llvm::enumerate(names)) {
    if (k == 8)
      return s + ", ...";
    s += (k ? ", \"" : "\"") + n + "\"";
  }
  return s.empty() ? "none" : s;
}

llvm::Expected<llvm::StringSet<>> shardc::onnximport::findBuffers(
    const onnx::GraphProto &graph,
    const llvm::StringMap<std::string> &copies,
    llvm::ArrayRef<std::string> declared) {
  llvm::StringSet<> floats, initializers, inputs;
  std::vector<std::string> floatNames;
  llvm::StringMap<const onnx::TensorProto *> floatInits;
  for (const onnx::TensorProto &init : graph.initializer()) {
    initializers.insert(init.name());
    if (init.data_type() == onnx::TensorProto::FLOAT &&
        floats.insert(init.name()).second) {
      floatNames.push_back(init.name());
      floatInits[init.name()] = &init;
    }
  }
  for (const auto &copy : copies) {
    floats.insert(copy.getKey());
    floatNames.push_back(copy.getKey().str());
  }
  for (const onnx::ValueInfoProto &input : graph.input())
    inputs.insert(input.name());

  llvm::StringSet<> buffers;
  for (const std::string &name : declared) {
    // `--buffers=` or a trailing comma: nothing declared.
    if (name.empty())
      continue;
    // A pattern (a plan's: `*` within a dotted part, `**` across them)
    // names a buffer every layer has: `layers.*.attn.rope_cos`.
    if (StringRef(name).contains('*')) {
      bool matched = false;
      for (const std::string &f : floatNames)
        if (matchesPlanPattern(name, f)) {
          buffers.insert(f);
          matched = true;
        }
      for (const auto &init : initializers)
        matched |= matchesPlanPattern(name, init.getKey());
      if (!matched)
        return llvm::createStringError(
            "buffer pattern \"" + name +
            "\" matches no initializer of the model (its float "
            "initializers: " +
            listNames(floatNames) + ")");
      continue;
    }
    if (floats.contains(name)) {
      buffers.insert(name);
      continue;
    }
    // An integer or boolean initializer is a constant already.
    if (initializers.contains(name))
      continue;
    if (inputs.contains(name))
      return llvm::createStringError(
          "buffer \"" + name +
          "\" is a graph input, not an initializer: a buffer is a value "
          "stored in the file");
    return llvm::createStringError(
        "buffer \"" + name +
        "\" names no initializer of the model (its float initializers: " +
        listNames(floatNames) + ")");
  }

  // torch writes a buffer every layer registers (a RoPE table) once, and
  // the other layers' copies as Identity nodes: declaring one declares
  // them all, as they are one value. Not so for a value whose elements
  // are all equal: torch writes BatchNorm's running_var and its weight,
  // both ones, as one initializer too, and only the first is a buffer.
  llvm::StringMap<std::string> rootOf;
  for (const auto &copy : copies)
    rootOf[copy.getKey()] = copy.getValue();
  auto root = [&](StringRef name) {
    auto it = rootOf.find(name);
    return it == rootOf.end() ? name.str() : it->second;
  };
  llvm::StringSet<> declaredRoots;
  for (const auto &b : buffers)
    if (const onnx::TensorProto *t = floatInits.lookup(root(b.getKey()));
        t && !allElementsEqual(*t))
      declaredRoots.insert(root(b.getKey()));
  for (const std::string &name : floatNames)
    if (declaredRoots.contains(root(name)))
      buffers.insert(name);

  // Every value a gradient can reach from the outputs, walking the nodes
  // backwards (the file is in topological order). A parameter's copy is an
  // argument of its own (parameterCopies): its Identity node is no use of
  // the value it copies.
  llvm::StringSet<> live, used;
  for (const onnx::ValueInfoProto &out : graph.output())
    live.insert(out.name());
  for (int n = graph.node_size() - 1; n >= 0; --n) {
    const onnx::NodeProto &node = graph.node(n);
    if (node.op_type() == "Identity" && node.output_size() == 1 &&
        copies.count(node.output(0)))
      continue;
    bool reached = llvm::any_of(node.output(), [&](const std::string &o) {
      return !o.empty() && live.contains(o);
    });
    for (int i = 0; i < node.input_size(); ++i) {
      used.insert(node.input(i));
      if (reached && passesGradient(node, i))
        live.insert(node.input(i));
    }
  }
  // An unused initializer stays what it was (a parameter): nothing shows
  // it is a buffer, and torch drops unused ones from the file anyway.
  for (const std::string &name : floatNames)
    if (used.contains(name) && !live.contains(name))
      buffers.insert(name);
  return buffers;
}
