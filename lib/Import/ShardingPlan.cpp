//===- ShardingPlan.cpp - shardings given by name patterns ----------------===//
//
// The plan is JSON, parsed without exceptions (this library is built with
// -fno-exceptions: a throwing accessor would abort), every field's type
// checked before it is read.
//
//===----------------------------------------------------------------------===//

#include "shardc/Import/ShardingPlan.h"

#include "JsonText.h"

#include "shardc/Dialect/FunctionInterface.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardcOps.h"
#include "shardc/Dialect/ValueNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace shardc;
using llvm::SmallVector;
using llvm::StringRef;
using Json = nlohmann::json;

static llvm::Error planError(const std::string &message) {
  return llvm::createStringError(message);
}

static std::string quote(StringRef s) {
  return "\"" + jsonimport::printable(s) + "\"";
}

/// The axes of one dim of a PartitionSpec: null, "axis", or a list of axes.
static llvm::Expected<SmallVector<std::string>> readDim(const Json &dim,
                                                        const std::string &at) {
  SmallVector<std::string> axes;
  if (dim.is_null())
    return axes;
  if (dim.is_string()) {
    axes.push_back(dim.get<std::string>());
    return axes;
  }
  if (!dim.is_array())
    return planError(at + ": a dim is null, a mesh axis or a list of axes");
  for (const Json &axis : dim) {
    if (!axis.is_string())
      return planError(at + ": a list of axes holds strings only");
    axes.push_back(axis.get<std::string>());
  }
  return axes;
}

/// The fields saying how the plan runs (what `estimate --auto-shard`
/// chose), each type-checked.
static llvm::Error readExecution(const Json &root,
                                 ShardingPlan::Execution &out) {
  auto count = [&](const char *key,
                   std::optional<int64_t> &field) -> llvm::Error {
    auto it = root.find(key);
    if (it == root.end())
      return llvm::Error::success();
    if (!it->is_number_integer() || it->get<int64_t>() < 1)
      return planError(std::string(key) + ": must be a positive integer");
    field = it->get<int64_t>();
    return llvm::Error::success();
  };
  if (llvm::Error e = count("micro_batch_size", out.microBatchSize))
    return e;
  if (llvm::Error e = count("microbatches", out.microbatches))
    return e;
  if (llvm::Error e = count("global_batch", out.globalBatch))
    return e;
  if (auto it = root.find("recompute"); it != root.end()) {
    if (!it->is_string())
      return planError("recompute: must be none, selective or full");
    out.recompute = it->get<std::string>();
  }
  if (auto it = root.find("sequence_parallel"); it != root.end()) {
    if (!it->is_boolean())
      return planError("sequence_parallel: must be true or false");
    out.sequenceParallel = it->get<bool>();
  }
  if (auto it = root.find("zero_axes"); it != root.end()) {
    if (!it->is_array())
      return planError("zero_axes: must be a list of mesh axes");
    for (const Json &axis : *it) {
      if (!axis.is_string())
        return planError("zero_axes: must be a list of mesh axes");
      out.zeroAxes.push_back(axis.get<std::string>());
    }
  }
  if (auto it = root.find("pipeline"); it != root.end()) {
    if (!it->is_object())
      return planError("pipeline: must be an object {\"axis\", \"stages\", "
                       "\"schedule\", \"virtual_stages\"}");
    for (auto f = it->begin(); f != it->end(); ++f)
      if (f.key() != "axis" && f.key() != "stages" && f.key() != "schedule" &&
          f.key() != "virtual_stages")
        return planError("pipeline: unknown field " + quote(f.key()));
    if (auto v = it->find("virtual_stages"); v != it->end()) {
      if (!v->is_number_integer() || v->get<int64_t>() < 1)
        return planError("pipeline.virtual_stages: must be a positive integer");
      out.virtualStages = v->get<int64_t>();
    }
    if (auto axis = it->find("axis"); axis != it->end() && !axis->is_null()) {
      if (!axis->is_string())
        return planError("pipeline.axis: must be a mesh axis or null");
      out.pipelineAxis = axis->get<std::string>();
    }
    if (auto schedule = it->find("schedule"); schedule != it->end()) {
      if (!schedule->is_string())
        return planError(
            "pipeline.schedule: must be gpipe, 1f1b or interleaved");
      out.schedule = schedule->get<std::string>();
    }
  }
  return llvm::Error::success();
}

llvm::Expected<ShardingPlan> shardc::parseShardingPlan(StringRef text) {
  if (std::optional<jsonimport::TextError> e =
          jsonimport::checkNesting(text, jsonimport::kMaxNestingDepth))
    return planError(e->message);
  Json root = Json::parse(text.begin(), text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded())
    return planError("not valid JSON");
  if (!root.is_object())
    return planError("a plan is an object with \"mesh\" and \"rules\"");
  static const char *const executionFields[] = {
      "pipeline",  "micro_batch_size", "microbatches",     "global_batch",
      "recompute", "zero_axes",        "sequence_parallel"};
  for (auto it = root.begin(); it != root.end(); ++it)
    if (it.key() != "mesh" && it.key() != "rules" &&
        it.key() != "description" &&
        !llvm::is_contained(executionFields, StringRef(it.key())))
      return planError("unknown field " + quote(it.key()) +
                       " (a plan has \"mesh\", \"rules\" and an optional "
                       "\"description\", and may say how it runs: "
                       "\"pipeline\", \"micro_batch_size\", "
                       "\"microbatches\", \"global_batch\", \"recompute\", "
                       "\"zero_axes\", \"sequence_parallel\")");
  ShardingPlan plan;
  if (llvm::Error e = readExecution(root, plan.execution))
    return std::move(e);
  auto mesh = root.find("mesh");
  if (mesh == root.end() || !mesh->is_object())
    return planError("mesh: must be an object {\"name\": ..., \"axes\": "
                     "[[axis, size], ...]}");
  for (auto it = mesh->begin(); it != mesh->end(); ++it)
    if (it.key() != "name" && it.key() != "axes")
      return planError("mesh: unknown field " + quote(it.key()));
  if (auto name = mesh->find("name"); name != mesh->end()) {
    if (!name->is_string() || name->get<std::string>().empty())
      return planError("mesh.name: must be a non-empty string");
    plan.meshName = name->get<std::string>();
  }
  auto axes = mesh->find("axes");
  if (axes == mesh->end() || !axes->is_array() || axes->empty())
    return planError("mesh.axes: must be a non-empty list of [axis, size]");
  int64_t devices = 1;
  for (size_t i = 0; i < axes->size(); ++i) {
    const Json &axis = (*axes)[i];
    std::string at = "mesh.axes[" + std::to_string(i) + "]";
    if (!axis.is_array() || axis.size() != 2 || !axis[0].is_string() ||
        axis[0].get<std::string>().empty() || !axis[1].is_number_integer())
      return planError(at + ": must be [axis name, size]");
    std::string name = axis[0].get<std::string>();
    int64_t size = axis[1].get<int64_t>();
    if (size < 1 || size > (int64_t(1) << 20) / devices)
      return planError(at + ": axis " + quote(name) + " has size " +
                       std::to_string(size) +
                       " (sizes are at least 1, at most 2^20 devices in all)");
    for (const auto &[other, otherSize] : plan.axes)
      if (other == name)
        return planError(at + ": axis " + quote(name) + " is declared twice");
    devices *= size;
    plan.axes.emplace_back(name, size);
  }
  auto rules = root.find("rules");
  if (rules == root.end() || !rules->is_array())
    return planError("rules: must be a list of [pattern, PartitionSpec]");
  for (size_t i = 0; i < rules->size(); ++i) {
    const Json &rule = (*rules)[i];
    std::string at = "rules[" + std::to_string(i) + "]";
    if (!rule.is_array() || rule.size() != 2 || !rule[0].is_string() ||
        rule[0].get<std::string>().empty() || !rule[1].is_array())
      return planError(at + ": must be [pattern, [dim, ...]] with a "
                            "non-empty pattern");
    ShardingPlan::Rule r;
    r.pattern = rule[0].get<std::string>();
    for (size_t d = 0; d < rule[1].size(); ++d) {
      llvm::Expected<SmallVector<std::string>> dim =
          readDim(rule[1][d], at + "[1][" + std::to_string(d) + "]");
      if (!dim)
        return dim.takeError();
      for (const std::string &axis : *dim)
        if (llvm::none_of(plan.axes,
                          [&](const auto &a) { return a.first == axis; }))
          return planError(at + " (" + quote(r.pattern) + "): axis " +
                           quote(axis) + " is not an axis of the mesh");
      r.dims.push_back(std::move(*dim));
    }
    plan.rules.push_back(std::move(r));
  }
  return plan;
}

llvm::Expected<ShardingPlan> shardc::readShardingPlan(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return planError("cannot read plan '" + path.str() +
                     "': " + file.getError().message());
  llvm::Expected<ShardingPlan> plan = parseShardingPlan((*file)->getBuffer());
  if (!plan)
    return planError("plan " + path.str() + ": " +
                     llvm::toString(plan.takeError()));
  return plan;
}

bool shardc::matchesPlanPattern(StringRef pattern, StringRef name) {
  // matched[j]: the pattern so far matches name[0, j). One row per pattern
  // token; `*` and `**` extend a match over the characters they allow.
  size_t n = name.size();
  std::vector<char> matched(n + 1, 0), next(n + 1);
  matched[0] = 1;
  for (size_t p = 0; p < pattern.size();) {
    if (pattern[p] == '*') {
      bool across = p + 1 < pattern.size() && pattern[p + 1] == '*';
      p += across ? 2 : 1;
      for (size_t j = 0; j <= n; ++j)
        next[j] = matched[j] ||
                  (j > 0 && next[j - 1] && (across || name[j - 1] != '.'));
    } else {
      next[0] = 0;
      for (size_t j = 1; j <= n; ++j)
        next[j] = matched[j - 1] && name[j - 1] == pattern[p];
      ++p;
    }
    matched.swap(next);
  }
  return matched[n];
}

namespace {
/// A value the plan may shard, and how its sharding is set.
struct NamedValue {
  std::string name;
  Value value;
  std::function<void(ShardingAttr)> annotate;
  /// The shape the checkpoint holds it in, when the model computes on a
  /// stacked view of it (the ONNX importer's fused projections), else
  /// empty.
  SmallVector<int64_t> checkpointShape;
};
} // namespace

static std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

static std::string specText(ArrayRef<SmallVector<std::string>> dims) {
  std::string s = "[";
  for (auto [i, axes] : llvm::enumerate(dims)) {
    s += i ? ", " : "";
    if (axes.empty())
      s += "null";
    else if (axes.size() == 1)
      s += quote(axes[0]);
    else
      s += "[" + llvm::join(llvm::map_range(axes, quote), ", ") + "]";
  }
  return s + "]";
}

/// A rule written for a parameter's checkpoint shape (torch's state_dict:
/// `in_proj_bias` [192]) moved onto the stacked view the model computes on
/// ([3, 64]): the view splits one checkpoint dim d into [N, K] (N chunks:
/// q, k and v), the others are the same. The rule's split of d is a split
/// of the chunks when its axes' product divides N; any other split of d
/// would cut a chunk in parts, which the view cannot hold, and is refused
/// saying what to write.
static llvm::Expected<SmallVector<SmallVector<std::string>>>
ruleForView(ArrayRef<SmallVector<std::string>> rule,
            ArrayRef<int64_t> checkpoint, ArrayRef<int64_t> view,
            const ShardingPlan &plan, const std::string &what) {
  size_t d = 0;
  while (d < checkpoint.size() && checkpoint[d] == view[d])
    ++d;
  std::string stacked = what + " is computed on as a stacked view " +
                        shapeText(view) + " of its checkpoint shape " +
                        shapeText(checkpoint) +
                        " (docs/onnx.md#attention-fused-projections-and-heads)";
  if (d == checkpoint.size() || view.size() != checkpoint.size() + 1 ||
      view[d] * view[d + 1] != checkpoint[d] ||
      ArrayRef<int64_t>(checkpoint).drop_front(d + 1) != view.drop_front(d + 2))
    return planError(stacked);
  int64_t split = 1;
  for (const std::string &axis : rule[d])
    for (const auto &[name, size] : plan.axes)
      if (name == axis)
        split *= size;
  SmallVector<SmallVector<std::string>> out(rule.begin(), rule.end());
  out.insert(out.begin() + d + 1, SmallVector<std::string>());
  if (view[d] % split == 0)
    return out;
  // The heads are dim d + 1 of the view: the split that was meant.
  SmallVector<SmallVector<std::string>> heads = out;
  std::swap(heads[d], heads[d + 1]);
  return planError(stacked + ": splitting its dim " + std::to_string(d) + " (" +
                   std::to_string(checkpoint[d]) + ") in " +
                   std::to_string(split) + " would cut its " +
                   std::to_string(view[d]) +
                   " chunks apart; write the rule for the view, " +
                   specText(heads) + " to split every chunk (its heads)");
}

llvm::Error shardc::applyShardingPlan(ModuleOp module, const ShardingPlan &plan,
                                      StringRef planName) {
  MLIRContext *ctx = module.getContext();
  SmallVector<MeshOp> meshes(module.getOps<MeshOp>());
  if (meshes.size() != 1)
    return planError("plan " + planName.str() +
                     ": the model must have exactly one mesh, it has " +
                     std::to_string(meshes.size()));
  MeshOp mesh = meshes.front();
  if (!plan.meshName.empty() && plan.meshName != mesh.getSymName())
    return planError("plan " + planName.str() + ": its mesh is named " +
                     quote(plan.meshName) + " but the model's is " +
                     quote(mesh.getSymName()) + "; name them alike");
  func::FuncOp func;
  {
    // getEntryFunction reports at the module when there is none.
    std::string message;
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      message = d.str();
      return success();
    });
    func = getEntryFunction(module);
    if (!func)
      return planError("plan " + planName.str() + ": " + message);
  }

  // The plan's mesh replaces the model's.
  OpBuilder b(ctx);
  SmallVector<StringRef> axisNames;
  SmallVector<int64_t> axisSizes;
  for (const auto &[name, size] : plan.axes) {
    axisNames.push_back(name);
    axisSizes.push_back(size);
  }
  mesh.setAxisNamesAttr(b.getStrArrayAttr(axisNames));
  mesh.setAxisSizesAttr(b.getDenseI64ArrayAttr(axisSizes));
  auto meshRef = FlatSymbolRefAttr::get(ctx, mesh.getSymName());

  SmallVector<NamedValue> values;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    values.push_back({getArgumentName(func, i),
                      func.getArgument(i),
                      [func, i](ShardingAttr s) mutable {
                        func.setArgAttr(i, ShardcDialect::getShardingAttrName(),
                                        s);
                      },
                      {}});
    SmallVector<int64_t> stored = getCheckpointShape(func, i);
    if (ArrayRef<int64_t>(stored) !=
        cast<ShapedType>(func.getArgument(i).getType()).getShape())
      values.back().checkpointShape = stored;
  }
  func.walk([&](Operation *op) {
    if (op->getNumResults() != 1)
      return;
    StringRef name = getNameFromLoc(op->getLoc());
    if (name.empty())
      return;
    values.push_back({name.str(),
                      op->getResult(0),
                      [op](ShardingAttr s) {
                        op->setAttr(ShardcDialect::getShardingAttrName(), s);
                      },
                      {}});
  });

  std::vector<size_t> uses(plan.rules.size(), 0);
  for (NamedValue &v : values) {
    auto type = dyn_cast<RankedTensorType>(v.value.getType());
    if (!type)
      continue;
    for (auto [index, rule] : llvm::enumerate(plan.rules)) {
      if (!matchesPlanPattern(rule.pattern, v.name))
        continue;
      ++uses[index];
      std::string ruleText = "plan " + planName.str() + ": rule " +
                             std::to_string(index) + " (" +
                             quote(rule.pattern) + ")";
      SmallVector<SmallVector<std::string>> ruleDims(rule.dims.begin(),
                                                     rule.dims.end());
      if (!v.checkpointShape.empty() &&
          rule.dims.size() == v.checkpointShape.size()) {
        llvm::Expected<SmallVector<SmallVector<std::string>>> moved =
            ruleForView(ruleDims, v.checkpointShape, type.getShape(), plan,
                        ruleText + ": " + quote(v.name));
        if (!moved)
          return moved.takeError();
        ruleDims = std::move(*moved);
      }
      if (static_cast<int64_t>(ruleDims.size()) != type.getRank()) {
        // The shape too: the ONNX importer stacks fused projections
        // (docs/onnx.md), whose rank is then not the file's.
        std::string shape;
        llvm::raw_string_ostream os(shape);
        llvm::interleave(type.getShape(), os, "x");
        return planError(
            ruleText + " gives " + std::to_string(rule.dims.size()) +
            " dims, but " + quote(v.name) + " has rank " +
            std::to_string(type.getRank()) + " (" + os.str() + ")" +
            (v.checkpointShape.empty()
                 ? std::string()
                 : ", a stacked view of its checkpoint shape " +
                       shapeText(v.checkpointShape) +
                       ": give a dim for each dim of either"));
      }
      SmallVector<SmallVector<StringRef>> dims;
      SmallVector<StringRef> used;
      // Axes that do not divide the dim they split pad it
      // (docs/sharding.md#uneven-dims).
      for (const auto &axes : ruleDims) {
        dims.emplace_back();
        for (const std::string &axis : axes) {
          if (llvm::is_contained(used, axis))
            return planError(ruleText + " uses axis " + quote(axis) + " twice");
          used.push_back(axis);
          dims.back().push_back(axis);
        }
      }
      v.annotate(ShardingAttr::get(ctx, meshRef, dims, {}));
      break;
    }
  }
  for (auto [index, rule] : llvm::enumerate(plan.rules))
    if (uses[index] == 0)
      return planError("plan " + planName.str() + ": rule " +
                       std::to_string(index) + " (" + quote(rule.pattern) +
                       ") matches no value of the model");

  // Annotations the model had keep their axes: the new mesh must have them.
  std::string message;
  {
    ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
      if (message.empty()) {
        message = d.str();
        if (std::string name = getNameFromLoc(d.getLocation()).str();
            !name.empty())
          message = quote(name) + ": " + message;
      }
      return success();
    });
    if (succeeded(verify(module)))
      return llvm::Error::success();
  }
  return planError("plan " + planName.str() +
                   ": the model does not fit the plan's mesh: " + message);
}
