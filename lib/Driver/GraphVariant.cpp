//===- GraphVariant.cpp - a JSON graph at another batch and depth ---------===//

#include "shardc/Driver/GraphVariant.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Regex.h"

using namespace shardc;
namespace json = llvm::json;

static llvm::Error graphError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

static std::optional<llvm::StringRef> outputName(const json::Value &op) {
  if (const json::Object *o = op.getAsObject())
    if (std::optional<llvm::StringRef> name = o->getString("output"))
      return name;
  return std::nullopt;
}

llvm::Expected<GraphVariant> GraphVariant::parse(llvm::StringRef text,
                                                 llvm::StringRef dataAxis,
                                                 llvm::StringRef layerInputs) {
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value)
    return value.takeError();
  GraphVariant g;
  json::Object *root = value->getAsObject();
  if (!root || !root->getArray("inputs") || !root->getArray("ops"))
    return graphError("the whole-plan search reads a JSON graph "
                      "(docs/json-format.md) with \"inputs\" and \"ops\"");
  g.root = std::move(*root);
  // The batch inputs: those split over the data axis along dim 0, or, in
  // a model that splits none (one written without annotations), the data
  // the step reads: every input of rank one or more not marked `param`.
  std::vector<std::pair<std::string, int64_t>> split, data;
  for (const json::Value &input : *g.root.getArray("inputs")) {
    const json::Object *in = input.getAsObject();
    if (!in)
      continue;
    std::optional<llvm::StringRef> name = in->getString("name");
    const json::Array *shape = in->getArray("shape");
    const json::Array *spec = in->getArray("sharding");
    bool param = in->getBoolean("param").value_or(false);
    if (param && shape) {
      double n = 1;
      for (const json::Value &d : *shape)
        n *= double(d.getAsInteger().value_or(1));
      g.numParameters += n;
    }
    if (name && spec)
      g.inputAnnotations.emplace_back(name->str(),
                                      json::Value(json::Array(*spec)));
    if (!name || !shape || shape->empty())
      continue;
    int64_t b = (*shape)[0].getAsInteger().value_or(0);
    std::optional<llvm::StringRef> first;
    if (spec && !spec->empty())
      first = (*spec)[0].getAsString();
    if (first && *first == dataAxis)
      split.emplace_back(name->str(), b);
    else if (!param)
      data.emplace_back(name->str(), b);
  }
  const auto &carriers = split.empty() ? data : split;
  for (const auto &[name, b] : carriers) {
    if (g.graphBatch && b != g.graphBatch)
      return graphError((split.empty()
                             ? std::string("the inputs not marked param")
                             : "inputs split over \"" + dataAxis.str() + "\"") +
                        " disagree on the batch (" + llvm::Twine(g.graphBatch) +
                        " and " + llvm::Twine(b) + ")");
    g.graphBatch = b;
    g.batchInputs.push_back(name);
  }
  if (g.graphBatch <= 0)
    return graphError("no input is split over the data axis \"" + dataAxis +
                      "\" along its dim 0, and none but parameters is read, "
                      "so the model has no batch to divide");
  llvm::Regex pattern(layerInputs);
  std::string error;
  if (!pattern.isValid(error))
    return graphError("--layer-inputs: " + error);
  const json::Array &ops = *g.root.getArray("ops");
  for (size_t i = 0; i < ops.size(); ++i)
    if (std::optional<llvm::StringRef> name = outputName(ops[i]))
      if (pattern.match(*name))
        g.layerInputOps.push_back(i);
  g.numLayers = g.layerInputOps.empty() ? 0 : g.layerInputOps.size() - 1;
  // Each input's layer: the one whose ops read it first (layer l's ops
  // follow its input, layerInputOps[l], up to the next); its turn, the
  // order in which that layer's ops read their inputs first.
  if (g.numLayers >= 2) {
    llvm::StringMap<json::Array> shapes;
    for (const json::Value &input : *g.root.getArray("inputs"))
      if (const json::Object *in = input.getAsObject())
        if (std::optional<llvm::StringRef> name = in->getString("name"))
          if (const json::Array *shape = in->getArray("shape"))
            shapes[*name] = *shape;
    std::vector<std::vector<std::string>> byLayer(g.numLayers);
    llvm::StringSet<> seen;
    size_t layer = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      while (layer + 1 < g.layerInputOps.size() &&
             i > g.layerInputOps[layer + 1])
        ++layer;
      bool inLayer = i > g.layerInputOps.front() && i <= g.layerInputOps.back();
      const json::Object *o = ops[i].getAsObject();
      const json::Array *in = o ? o->getArray("inputs") : nullptr;
      if (!in)
        continue;
      for (const json::Value &v : *in) {
        std::optional<llvm::StringRef> s = v.getAsString();
        if (!s || !shapes.count(*s) || !seen.insert(*s).second)
          continue;
        if (inLayer)
          byLayer[layer].push_back(s->str());
      }
    }
    for (size_t l = 1; l < byLayer.size(); ++l)
      for (size_t k = 0; k < byLayer[l].size() && k < byLayer[0].size(); ++k)
        if (shapes[byLayer[l][k]] == shapes[byLayer[0][k]])
          g.peers[byLayer[l][k]] = byLayer[0][k];
  }
  // The residual stream: from each layer input, the adds that read it (or
  // an add that does) until the next layer input.
  llvm::StringSet<> residual;
  for (size_t i : g.layerInputOps)
    residual.insert(*outputName(ops[i]));
  for (const json::Value &op : ops) {
    std::optional<llvm::StringRef> name = outputName(op);
    const json::Object *o = op.getAsObject();
    const json::Array *in = o ? o->getArray("inputs") : nullptr;
    if (!name || !in || o->getString("op") != llvm::StringRef("add"))
      continue;
    if (llvm::any_of(*in, [&](const json::Value &v) {
          std::optional<llvm::StringRef> s = v.getAsString();
          return s && residual.contains(*s);
        }))
      residual.insert(*name);
  }
  for (const json::Value &op : ops)
    if (std::optional<llvm::StringRef> name = outputName(op))
      if (residual.contains(*name))
        g.residualNames.push_back(name->str());
  return g;
}

std::vector<std::string> GraphVariant::inputNames() const {
  std::vector<std::string> names;
  for (const json::Value &input : *root.getArray("inputs"))
    if (const json::Object *in = input.getAsObject())
      if (std::optional<llvm::StringRef> name = in->getString("name"))
        names.push_back(name->str());
  return names;
}

llvm::StringRef GraphVariant::firstLayerPeer(llvm::StringRef input) const {
  auto it = peers.find(input);
  return it == peers.end() ? input : llvm::StringRef(it->second);
}

std::vector<int64_t>
GraphVariant::splitByModelAxis(llvm::StringRef modelAxis) const {
  std::vector<int64_t> modelSplitSizes;
  for (const json::Value &input : *root.getArray("inputs")) {
    const json::Object *in = input.getAsObject();
    const json::Array *shape = in ? in->getArray("shape") : nullptr;
    const json::Array *spec = in ? in->getArray("sharding") : nullptr;
    if (!shape || !spec)
      continue;
    for (size_t d = 0; d < spec->size() && d < shape->size(); ++d) {
      std::optional<llvm::StringRef> axis = (*spec)[d].getAsString();
      if (axis && *axis == modelAxis)
        modelSplitSizes.push_back((*shape)[d].getAsInteger().value_or(1));
    }
  }
  return modelSplitSizes;
}

/// Dim 0 of `shape`, when it is the batch, becomes `batch`.
static void rebatch(json::Array *shape, int64_t from, int64_t batch) {
  if (shape && !shape->empty() && (*shape)[0].getAsInteger() == from)
    (*shape)[0] = batch;
}

std::string
GraphVariant::variant(int64_t batch, int64_t keptLayers,
                      const std::vector<std::pair<std::string, int64_t>> &axes,
                      const InputShardings *shardings) const {
  // Only the layers kept are copied: the whole-plan search prices most
  // candidates on a few layers of a deep model, and copying all of its
  // ops for each was a fifth of the search's time (GPT-3's 96 layers).
  json::Object g;
  for (const auto &[key, value] : root)
    if (key != "ops" && key != "inputs")
      g[key] = value;
  const json::Array &allOps = *root.getArray("ops");
  const json::Array &allInputs = *root.getArray("inputs");
  json::Array ops, inputs;
  if (keptLayers < numLayers && keptLayers >= 0) {
    size_t keepEnd = layerInputOps[keptLayers];
    size_t dropEnd = layerInputOps[numLayers];
    llvm::StringRef last = *outputName(allOps[dropEnd]);
    llvm::StringRef kept = *outputName(allOps[keepEnd]);
    for (size_t i = 0; i < allOps.size(); ++i) {
      if (i > keepEnd && i <= dropEnd)
        continue;
      json::Value op = allOps[i];
      if (json::Array *in = op.getAsObject()->getArray("inputs"))
        for (json::Value &name : *in)
          if (name.getAsString() == last)
            name = kept.str();
      ops.push_back(std::move(op));
    }
    // The inputs only the dropped layers read go too.
    llvm::StringSet<> read;
    for (const json::Value &op : ops)
      if (const json::Array *in = op.getAsObject()->getArray("inputs"))
        for (const json::Value &name : *in)
          if (std::optional<llvm::StringRef> s = name.getAsString())
            read.insert(*s);
    for (const json::Value &input : allInputs) {
      std::optional<llvm::StringRef> name =
          input.getAsObject()->getString("name");
      if (!name || read.contains(*name))
        inputs.push_back(input);
    }
  } else {
    ops = allOps;
    inputs = allInputs;
  }
  // Only the batch inputs carry the batch.
  for (json::Value &input : inputs)
    if (json::Object *in = input.getAsObject())
      if (std::optional<llvm::StringRef> name = in->getString("name"))
        if (llvm::is_contained(batchInputs, *name))
          rebatch(in->getArray("shape"), graphBatch, batch);
  for (json::Value &op : ops)
    if (json::Object *o = op.getAsObject())
      rebatch(o->getArray("shape"), graphBatch, batch);
  if (shardings) {
    for (json::Value &input : inputs)
      if (json::Object *in = input.getAsObject()) {
        in->erase("sharding");
        in->erase("partial");
        std::optional<llvm::StringRef> name = in->getString("name");
        if (!name)
          continue;
        auto it = shardings->find(*name);
        if (it == shardings->end())
          it = shardings->find(firstLayerPeer(*name));
        if (it != shardings->end())
          (*in)["sharding"] = it->second;
      }
    for (json::Value &op : ops)
      if (json::Object *o = op.getAsObject())
        if (o->getString("op") != llvm::StringRef("sharding_constraint")) {
          o->erase("sharding");
          o->erase("partial");
        }
    if (json::Array *outputs = g.getArray("outputs"))
      for (json::Value &output : *outputs)
        if (json::Object *o = output.getAsObject()) {
          o->erase("sharding");
          o->erase("partial");
        }
  }
  g["ops"] = std::move(ops);
  g["inputs"] = std::move(inputs);

  json::Array meshAxes;
  for (const auto &[name, size] : axes)
    meshAxes.push_back(json::Array{name, size});
  // A model written without a mesh (one without annotations) gets one.
  json::Object mesh{{"name", "mesh"}};
  if (const json::Object *old = root.getObject("mesh"))
    if (std::optional<llvm::StringRef> name = old->getString("name"))
      mesh["name"] = *name;
  mesh["axes"] = std::move(meshAxes);
  g["mesh"] = std::move(mesh);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(g));
  return text;
}
