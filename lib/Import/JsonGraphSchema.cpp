//===- JsonGraphSchema.cpp - the JSON graph format's schema, from the ops -===//
//
// The graph's own fields (mesh, inputs, outputs, the fields every op entry
// has) are the format's and written here once; everything per op comes
// from the registry: the `op` enum is the ops a graph entry may name, and
// each op's clause gives its input count (ODS operands) and its fields
// (graphOpFields, which the importer accepts exactly), typed by attribute
// kind. Value checks that need the graph (names, shapes, ranges of dims)
// are the importer's.
//
//===----------------------------------------------------------------------===//

#include "shardc/Import/JsonGraphSchema.h"

#include "ImportState.h"

#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

using namespace mlir;
using namespace shardc;
using namespace shardc::jsonimport;
using Json = nlohmann::ordered_json;

/// The format's own part; `$defs/op` gets its `op` enum and per-op clauses
/// from the registry.
static constexpr llvm::StringLiteral kGraphSkeleton = R"json({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "shardc-graph.schema.json",
  "title": "shardc JSON graph",
  "description": "A program for shardc: one device mesh, named inputs, ops by IR mnemonic, outputs, with optional JAX PartitionSpec shardings. See json-format.md. Written by shardc-catalog --json-schema from the registered ops. Checks that need the whole graph (names defined once and before use, shapes, divisibility, axes of this mesh, ranges of dims) are the importer's.",
  "type": "object",
  "required": ["mesh", "inputs", "ops", "outputs"],
  "additionalProperties": false,
  "properties": {
    "$schema": {"type": "string"},
    "mesh": {"$ref": "#/$defs/mesh"},
    "spmd": {"type": "boolean", "description": "A partitioned program: shapes are per-device (local) shapes."},
    "inputs": {"type": "array", "items": {"$ref": "#/$defs/input"}},
    "ops": {"type": "array", "items": {"$ref": "#/$defs/op"}},
    "outputs": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/output"}}
  },
  "$defs": {
    "name": {"type": "string", "minLength": 1},
    "names": {"type": "array", "items": {"$ref": "#/$defs/name"}},
    "dim": {"type": "integer", "minimum": 0, "maximum": 9223372036854775807},
    "integers": {"type": "array", "items": {"type": "integer"}},
    "shape": {"type": "array", "items": {"$ref": "#/$defs/dim"}, "description": "Dimension sizes; the element count must fit in 64 bits."},
    "dtype": {"enum": ["f32", "i1", "i32", "i64", "f16", "bf16", "f64"], "default": "f32"},
    "number": {"oneOf": [{"type": "number"}, {"enum": ["inf", "-inf", "nan"]}, {"type": "boolean"}]},
    "axes": {"type": "array", "minItems": 1, "uniqueItems": true, "items": {"$ref": "#/$defs/name"}, "description": "Distinct axes of the mesh forming a collective's group."},
    "reduction": {"enum": ["sum", "max"], "default": "sum"},
    "sharding": {
      "type": ["array", "null"],
      "description": "JAX PartitionSpec: one entry per dim; null = replicated, \"x\" = split over x, [\"y\", \"x\"] = split over y then x. The whole field null: not annotated, as when absent.",
      "items": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/name"}, {"type": "array", "items": {"$ref": "#/$defs/name"}}]}
    },
    "partial": {"type": "array", "uniqueItems": true, "items": {"$ref": "#/$defs/name"}, "description": "Axes over which the value is a pending partial sum."},
    "mesh": {
      "type": "object",
      "required": ["name", "axes"],
      "additionalProperties": false,
      "properties": {
        "name": {"$ref": "#/$defs/name"},
        "axes": {
          "type": "array",
          "minItems": 1,
          "description": "[name, size] pairs, most major first; at most 2^20 devices in all.",
          "items": {"type": "array", "prefixItems": [{"$ref": "#/$defs/name"}, {"type": "integer", "minimum": 1, "maximum": 1048576}], "items": false, "minItems": 2}
        }
      }
    },
    "input": {
      "type": "object",
      "required": ["name", "shape"],
      "additionalProperties": false,
      "dependentRequired": {"partial": ["sharding"]},
      "properties": {
        "name": {"$ref": "#/$defs/name"},
        "shape": {"$ref": "#/$defs/shape"},
        "dtype": {"$ref": "#/$defs/dtype"},
        "sharding": {"$ref": "#/$defs/sharding"},
        "partial": {"$ref": "#/$defs/partial"},
        "param": {"type": "boolean", "description": "A trainable parameter: what --autodiff differentiates by default (the shardc.param argument attribute)."},
        "optimizer_state": {"type": "number", "description": "Optimizer state (added by --train-step), starting at this value in every element (the shardc.optimizer_state argument attribute)."}
      }
    },
    "output": {
      "type": "object",
      "required": ["name"],
      "additionalProperties": false,
      "dependentRequired": {"partial": ["sharding"]},
      "properties": {
        "name": {"$ref": "#/$defs/name"},
        "sharding": {"$ref": "#/$defs/sharding"},
        "partial": {"$ref": "#/$defs/partial"},
        "gradient_of": {"$ref": "#/$defs/name", "description": "The output is the gradient of this input (shardc.gradient_of)."},
        "next": {"$ref": "#/$defs/name", "description": "The output is this input's value after a training step (shardc.next)."},
        "global_shape": {"type": "array", "items": {"type": "integer", "minimum": 0}, "description": "Partitioned programs only: the global shape of an output split unevenly (padded), which its local shape does not say (shardc.global_shape)."}
      }
    },
    "op": {
      "type": "object",
      "required": ["op", "output"],
      "dependentRequired": {"partial": ["sharding"]},
      "properties": {
        "op": {"description": "The op's IR mnemonic without `shardc.`."},
        "inputs": {"$ref": "#/$defs/names"},
        "output": {"$ref": "#/$defs/name"},
        "sharding": {"$ref": "#/$defs/sharding"},
        "partial": {"$ref": "#/$defs/partial"},
        "stage": {"type": "integer", "minimum": 0, "description": "The pipeline stage the op runs in (shardc.stage; docs/pipeline.md)."}
      },
      "allOf": [],
      "unevaluatedProperties": false
    }
  }
})json";

static Json ref(llvm::StringRef def) {
  return Json{{"$ref", ("#/$defs/" + def).str()}};
}

/// The schema of an ODS attribute's JSON value, by its kind (the codecs of
/// JsonFieldCodecs.cpp).
static Json attributeSchema(OpFieldKind kind) {
  switch (kind) {
  case OpFieldKind::IntList:
    return ref("integers");
  case OpFieldKind::NameList:
    return ref("axes");
  case OpFieldKind::IntListList:
    return Json{{"type", "array"}, {"items", ref("integers")}};
  case OpFieldKind::Int:
    return Json{{"type", "integer"}};
  case OpFieldKind::Float:
    return Json{{"type", "number"}};
  case OpFieldKind::String:
    return Json{{"type", "string"}};
  case OpFieldKind::Reduction:
    return ref("reduction");
  case OpFieldKind::Sharding:
    return ref("sharding");
  case OpFieldKind::ElementType:
    return ref("dtype");
  case OpFieldKind::Elements:
  case OpFieldKind::MeshRef:
    break; // spelled by other fields (graphOpFields), never as themselves
  }
  return Json::object();
}

static Json fieldSchema(const GraphField &field) {
  switch (field.value) {
  case GraphFieldValue::Attribute:
    return attributeSchema(field.kind);
  case GraphFieldValue::PartialAxes:
    return ref("partial");
  case GraphFieldValue::Shape:
    return ref("shape");
  case GraphFieldValue::Dtype:
    return ref("dtype");
  case GraphFieldValue::Number:
    return ref("number");
  case GraphFieldValue::Numbers:
    return Json{{"type", "array"}, {"items", ref("number")}};
  case GraphFieldValue::Size:
    return Json{{"type", "integer"}, {"minimum", 0}};
  }
  return Json::object();
}

/// The clause of one op: `if` the entry names it, `then` its inputs and
/// fields.
static Json opClause(RegisteredOperationName name) {
  OpFields fields = *getOpFields(name);
  Json then = Json::object();
  Json required = Json::array();
  Json properties = Json::object();
  Json inputs = Json::object();
  if (fields.numOperands == 0) {
    inputs["maxItems"] = 0;
  } else {
    required.push_back("inputs");
    inputs["minItems"] = fields.numOperands;
    if (!fields.variadicOperands)
      inputs["maxItems"] = fields.numOperands;
  }
  properties["inputs"] = std::move(inputs);
  bool hasValue = false;
  for (const GraphField &field : graphOpFields(name, fields)) {
    properties[field.key] = fieldSchema(field);
    if (field.required)
      required.push_back(field.key);
    hasValue |= field.value == GraphFieldValue::Number;
  }
  then["required"] = std::move(required);
  then["properties"] = std::move(properties);
  // A constant gives its elements as a splat or as a list, not both.
  if (hasValue)
    then["oneOf"] = Json::array({Json{{"required", Json::array({"value"})}},
                                 Json{{"required", Json::array({"values"})}}});
  if (then["properties"].contains("result_partial"))
    then["dependentRequired"] = {{"result_partial", {"result_sharding"}}};
  std::string mnemonic = name.stripDialect().str();
  return Json{
      {"$comment", "shardc." + mnemonic + " (docs/Dialects/ShardcDialect.md)"},
      {"if", {{"properties", {{"op", {{"const", mnemonic}}}}}}},
      {"then", std::move(then)}};
}

void shardc::writeJsonGraphSchema(MLIRContext &ctx, llvm::raw_ostream &os) {
  ctx.getOrLoadDialect<ShardcDialect>();
  Json schema = Json::parse(kGraphSkeleton.begin(), kGraphSkeleton.end(),
                            /*cb=*/nullptr, /*allow_exceptions=*/false);
  Json &op = schema["$defs"]["op"];
  Json names = Json::array();
  for (llvm::StringRef mnemonic : opMnemonics(&ctx)) {
    names.push_back(mnemonic.str());
    op["allOf"].push_back(opClause(*lookupGraphOp(&ctx, mnemonic)));
  }
  op["properties"]["op"]["enum"] = std::move(names);
  os << schema.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

std::vector<std::string> shardc::jsonGraphVocabulary(MLIRContext &ctx) {
  ctx.getOrLoadDialect<ShardcDialect>();
  llvm::StringSet<> words;
  for (const char *key :
       {"op", "inputs", "output", "sharding", "partial", "stage"})
    words.insert(key);
  for (llvm::StringRef mnemonic : opMnemonics(&ctx)) {
    words.insert(mnemonic);
    RegisteredOperationName name = *lookupGraphOp(&ctx, mnemonic);
    for (const GraphField &field : graphOpFields(name, *getOpFields(name)))
      words.insert(field.key);
  }
  std::vector<std::string> out;
  for (const auto &word : words)
    out.push_back(word.getKey().str());
  llvm::sort(out);
  return out;
}
