//===- JsonOpBuilders.cpp - op entries of a JSON graph to shardc ops ------===//
//
// Nothing here knows an op: an entry's fields, arity and required fields
// come from the op's ODS definition (OpFieldsOpInterface, found from the
// registered op named by "op"), each attribute is read by the codec of its
// kind (JsonFieldCodecs.cpp), and the result type comes from where the op's
// traits and interfaces say it does (ResultTypeSource): its own type
// inference (so the importer and the verifier agree by construction), its
// operand, its constant value, the mesh (collectives, JsonCollectives.cpp)
// or the entry's "shape". Inference is called on the op built with a
// placeholder result type, which is replaced before anything sees it,
// rather than through the inferring builders, which treat a failure as
// fatal.
//
//===----------------------------------------------------------------------===//

#include "ImportState.h"

#include "shardc/Dialect/TensorOpBuilders.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::jsonimport;
using llvm::SmallVector;
using llvm::StringRef;

/// The registered shardc op a graph entry may name: one with a single
/// result and an OpFields description (the mesh is the graph's own field).
std::optional<RegisteredOperationName>
shardc::jsonimport::lookupGraphOp(MLIRContext *ctx, StringRef mnemonic) {
  std::optional<RegisteredOperationName> name =
      RegisteredOperationName::lookup(("shardc." + mnemonic).str(), ctx);
  if (!name || !name->hasTrait<mlir::OpTrait::OneResult>() ||
      !name->hasInterface<OpFieldsOpInterface>())
    return std::nullopt;
  return name;
}

SmallVector<StringRef> shardc::jsonimport::opMnemonics(MLIRContext *ctx) {
  SmallVector<StringRef> out;
  for (RegisteredOperationName name : ctx->getRegisteredOperations())
    if (name.getDialectNamespace() == ShardcDialect::getDialectNamespace() &&
        lookupGraphOp(ctx, name.stripDialect()))
      out.push_back(name.stripDialect());
  // The registry's order is its own business; messages list ops
  // alphabetically.
  llvm::sort(out);
  return out;
}

std::string shardc::jsonimport::partialKeyFor(StringRef shardingKey) {
  if (shardingKey.consume_back("sharding"))
    return shardingKey.str() + "partial";
  return shardingKey.str() + "_partial";
}

bool shardc::jsonimport::hasOwnShardingField(const OpFields &fields) {
  return llvm::any_of(fields.attrs,
                      [](const OpField &f) { return f.name == "sharding"; });
}

SmallVector<GraphField>
shardc::jsonimport::graphOpFields(OperationName name, const OpFields &fields) {
  SmallVector<GraphField> out;
  auto add = [&](std::string key, GraphFieldValue value, bool required,
                 OpFieldKind kind = OpFieldKind::Int) {
    if (llvm::any_of(out, [&](const GraphField &f) { return f.key == key; }))
      return;
    out.push_back({std::move(key), value, kind, required});
  };
  for (const OpField &field : fields.attrs) {
    switch (field.kind) {
    case OpFieldKind::MeshRef:
      break; // the graph's mesh
    case OpFieldKind::Elements:
      add("shape", GraphFieldValue::Shape, true);
      add("dtype", GraphFieldValue::Dtype, false);
      add("value", GraphFieldValue::Number, false);
      add("values", GraphFieldValue::Numbers, false);
      break;
    case OpFieldKind::Sharding:
      add(field.name.str(), GraphFieldValue::Attribute, field.required,
          field.kind);
      add(partialKeyFor(field.name), GraphFieldValue::PartialAxes, false);
      break;
    default:
      add(field.name.str(), GraphFieldValue::Attribute, field.required,
          field.kind);
    }
  }
  // The op's own "sharding" takes the name of the result's annotation,
  // which moves to its own fields.
  if (hasOwnShardingField(fields)) {
    add("result_sharding", GraphFieldValue::Attribute, false,
        OpFieldKind::Sharding);
    add("result_partial", GraphFieldValue::PartialAxes, false);
  }
  if (collectiveTakesSize(name.stripDialect()))
    add("size", GraphFieldValue::Size, false);
  if (getResultTypeSource(name, fields) == ResultTypeSource::GivenShape) {
    add("shape", GraphFieldValue::Shape, true);
    // Without an operand, nothing else gives the element type either.
    if (fields.numOperands == 0)
      add("dtype", GraphFieldValue::Dtype, false);
  }
  return out;
}

/// The spec of the op `mnemonic` names, worked out on first use.
static const GraphOpSpec *lookupSpec(ImportState &st, StringRef mnemonic) {
  auto [it, fresh] = st.opSpecs.try_emplace(mnemonic);
  if (fresh) {
    if (std::optional<RegisteredOperationName> name =
            lookupGraphOp(st.ctx, mnemonic)) {
      OpFields fields = *getOpFields(*name);
      GraphOpSpec spec{*name, fields, getResultTypeSource(*name, fields), {},
                       {}};
      spec.allowed = {"op", "inputs", "output", "sharding", "partial",
                      "stage"};
      spec.required = {"op", "output"};
      if (spec.fields.numOperands != 0)
        spec.required.push_back("inputs");
      for (const GraphField &field : graphOpFields(*name, spec.fields)) {
        spec.allowed.push_back(field.key);
        if (field.required)
          spec.required.push_back(field.key);
      }
      it->second = std::move(spec);
    }
  }
  return it->second ? &*it->second : nullptr;
}

FailureOr<OpEntry> shardc::jsonimport::readOpEntry(const JVal &entry) {
  if (!entry->is_object())
    return entry.error() << "must be an object, got " << describe(entry.get());
  JVal kindField = entry.field("op");
  if (!kindField.present())
    return entry.error() << "missing required field \"op\"";
  FailureOr<std::string> mnemonic = readString(kindField);
  if (failed(mnemonic))
    return failure();
  ImportState &st = entry.state();
  const GraphOpSpec *spec = lookupSpec(st, *mnemonic);
  if (!spec) {
    SmallVector<StringRef> known = opMnemonics(st.ctx);
    InFlightDiagnostic diag = kindField.error()
                              << "unknown op \"" << printable(*mnemonic) << "\""
                              << suggest(*mnemonic, known)
                              << "; known ops are ";
    llvm::interleaveComma(known, diag);
    return diag;
  }
  const OpFields &fields = spec->fields;
  JVal outputField = entry.field("output");
  if (!outputField.present())
    return entry.error() << "missing required field \"output\"";
  FailureOr<std::string> output = readName(outputField);
  if (failed(output))
    return failure();

  // From here on the entry is named by its output, which is what a user
  // searches the file for.
  JVal named = entry.renamed("output", *output);
  SmallVector<StringRef, 12> allowed(spec->allowed.begin(),
                                     spec->allowed.end());
  SmallVector<StringRef, 8> required(spec->required.begin(),
                                     spec->required.end());
  if (failed(checkFields(named, allowed, required)))
    return failure();

  OpEntry op{named,       *mnemonic, *output,           {},
             {},          spec->name, fields, spec->resultType};
  JVal inputs = named.field("inputs");
  if (inputs.present()) {
    FailureOr<SmallVector<std::string>> names = readNameList(inputs);
    if (failed(names))
      return failure();
    op.inputs = std::move(*names);
    for (size_t i = 0; i < op.inputs.size(); ++i)
      op.inputEntries.push_back(inputs.at(i));
  }
  unsigned arity = fields.numOperands;
  if (!fields.acceptsOperandCount(op.inputs.size())) {
    JVal at = inputs.present() ? inputs : named;
    InFlightDiagnostic diag = at.error() << "\"" << *mnemonic << "\" ";
    if (arity == 0)
      return diag << "takes no inputs, got " << op.inputs.size();
    return diag << "takes " << (fields.variadicOperands ? "at least " : "")
                << arity << (arity == 1 ? " input" : " inputs") << ", got "
                << op.inputs.size();
  }
  return op;
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

/// `"x" is tensor<16x64xf32>, "w" is tensor<...>`: the note attached to a
/// type inference error, which only states sizes.
static std::string describeOperands(const OpEntry &op,
                                    llvm::ArrayRef<Value> operands) {
  std::string out = "operands: ";
  llvm::raw_string_ostream os(out);
  for (auto [i, v] : llvm::enumerate(operands)) {
    if (i)
      os << ", ";
    os << "\"" << printable(op.inputs[i]) << "\" is " << v.getType();
  }
  return out;
}

/// Sets the result type of `created`, built with a placeholder, to the one
/// its type inference gives; erases it on failure.
static LogicalResult inferResult(const OpEntry &op, Operation *created,
                                 llvm::ArrayRef<Value> operands) {
  ImportState &st = op.entry.state();
  Location loc = created->getLoc();
  SmallVector<Type, 1> types;
  LogicalResult ok = reportAtEntries(
      st, findFileLoc(loc),
      [&] {
        auto infer = cast<InferTypeOpInterface>(created);
        return infer.inferReturnTypes(
            st.ctx, loc, created->getOperands(),
            created->getRawDictionaryAttrs(), created->getPropertiesStorage(),
            created->getRegions(), types);
      },
      [&] { return describeOperands(op, operands); });
  if (failed(ok) || types.size() != 1) {
    created->erase();
    return failure();
  }
  created->getResult(0).setType(types.front());
  return success();
}

/// Elementwise ops take operands of one type; a binary one (the
/// BinaryElementwise trait) broadcasts them as NumPy does: shapes aligned
/// at their last dims, each pair of sizes equal or one of them 1. Each
/// operand whose shape is not the broadcast one gets a broadcast_in_dim
/// (named `<output>.<lhs|rhs>`), so a bias add is one JSON op.
static LogicalResult broadcastOperands(const OpEntry &op,
                                       SmallVectorImpl<Value> &operands) {
  auto mismatch = [&](size_t i, StringRef why) {
    return op.entry.error() << "operands of \"" << op.mnemonic << "\" " << why
                            << ": \"" << printable(op.inputs[0]) << "\" is "
                            << typeStr(operands[0].getType()) << " but \""
                            << printable(op.inputs[i]) << "\" is "
                            << typeStr(operands[i].getType());
  };
  bool broadcasts = op.name->hasTrait<shardc::OpTrait::BinaryElementwise>();
  auto first = cast<RankedTensorType>(operands[0].getType());
  SmallVector<int64_t> shape(first.getShape());
  for (size_t i = 1; i < operands.size(); ++i) {
    auto type = cast<RankedTensorType>(operands[i].getType());
    if (type == first)
      continue;
    if (!broadcasts || type.getElementType() != first.getElementType())
      return mismatch(i, "have different types");
    ArrayRef<int64_t> other = type.getShape();
    SmallVector<int64_t> joined(std::max(shape.size(), other.size()), 1);
    for (size_t k = 0; k < joined.size(); ++k) {
      // Dims counted from the end; a missing one is 1.
      int64_t a = k < shape.size() ? shape[shape.size() - 1 - k] : 1;
      int64_t b = k < other.size() ? other[other.size() - 1 - k] : 1;
      if (a != b && a != 1 && b != 1)
        return mismatch(i, "do not broadcast (NumPy rules: aligned at the "
                           "last dim, sizes must be equal or 1)");
      joined[joined.size() - 1 - k] = a == 1 ? b : a;
    }
    shape = std::move(joined);
  }
  auto result = RankedTensorType::get(shape, first.getElementType());
  ImportState &st = op.entry.state();
  static constexpr const char *kSides[] = {"lhs", "rhs"};
  for (auto [i, v] : llvm::enumerate(operands)) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type == result)
      continue;
    int64_t offset = result.getRank() - type.getRank();
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < type.getRank(); ++d)
      dims.push_back(offset + d);
    std::string name = op.output + "." + (i < 2 ? kSides[i] : "operand");
    Location loc = NameLoc::get(StringAttr::get(st.ctx, name), op.entry.loc());
    v = buildBroadcastInDim(st.builder, loc, result, v, dims);
  }
  return success();
}

/// Builds an op from its fields.
static FailureOr<Operation *>
buildFromFields(const OpEntry &op, llvm::ArrayRef<Value> inputs, Location loc) {
  SmallVector<Value> operands(inputs);
  ImportState &st = op.entry.state();
  const JVal &e = op.entry;
  ResultTypeSource source = op.resultType;
  NamedAttrList attrs;
  Type resultType;
  for (const OpField &field : op.fields.attrs) {
    FailureOr<FieldValue> value = readField(op, field);
    if (failed(value))
      return failure();
    if (value->type)
      resultType = value->type;
    if (value->attr)
      attrs.append(field.name, value->attr);
  }
  if (source == ResultTypeSource::FromMesh)
    return buildCollective(op, operands.front(), attrs, loc);
  switch (source) {
  case ResultTypeSource::SameAsOperand:
    if (failed(broadcastOperands(op, operands)))
      return failure();
    resultType = operands[0].getType();
    break;
  case ResultTypeSource::GivenShape: {
    // The op's verifier checks the shape against the operand (element
    // count, broadcastable dims).
    FailureOr<SmallVector<int64_t>> shape = readShape(e.field("shape"));
    if (failed(shape))
      return failure();
    // The first operand's element type, or (an op without operands, iota)
    // the entry's "dtype".
    Type element;
    if (operands.empty()) {
      FailureOr<Type> dtype = readDtype(e.field("dtype"));
      if (failed(dtype))
        return failure();
      element = *dtype;
    } else {
      element = cast<RankedTensorType>(operands[0].getType()).getElementType();
    }
    resultType = RankedTensorType::get(*shape, element);
    break;
  }
  case ResultTypeSource::Inferred:
    // A placeholder until inference has run.
    resultType = operands.empty() ? Type(NoneType::get(st.ctx))
                                  : operands[0].getType();
    break;
  case ResultTypeSource::FromValue:
  case ResultTypeSource::FromMesh:
    break;
  }
  // An attribute that constrains the value itself (a sharding constraint)
  // must fit its type.
  for (const OpField &field : op.fields.attrs)
    if (field.kind == OpFieldKind::Sharding)
      if (auto sharding = dyn_cast_or_null<ShardingAttr>(attrs.get(field.name)))
        if (failed(checkShardingFits(e.field(field.name), sharding,
                                     operands.empty() ? resultType
                                                      : operands[0].getType(),
                                     "value \"" + op.output + "\"")))
          return failure();

  OperationState state(loc, *op.name);
  state.addOperands(operands);
  state.addTypes(resultType);
  state.addAttributes(attrs);
  Operation *created = st.builder.create(state);
  if (source == ResultTypeSource::Inferred &&
      failed(inferResult(op, created, operands)))
    return failure();
  return created;
}

FailureOr<Operation *>
shardc::jsonimport::buildOp(const OpEntry &op, llvm::ArrayRef<Value> operands) {
  if (!op.fields.acceptsOperandCount(operands.size()))
    return op.entry.error() << "internal error: unchecked op entry";
  ImportState &st = op.entry.state();
  FileLineColLoc fileLoc = op.entry.loc();
  Location loc = NameLoc::get(StringAttr::get(st.ctx, op.output), fileLoc);

  // On an op whose own attribute is "sharding" (sharding_constraint), the
  // annotation of its result, if any, has its own fields.
  bool ownSharding = hasOwnShardingField(op.fields);
  JVal shardingField =
      op.entry.field(ownSharding ? "result_sharding" : "sharding");
  FailureOr<ShardingAttr> sharding =
      readSharding(shardingField,
                   op.entry.field(ownSharding ? "result_partial" : "partial"));
  if (failed(sharding))
    return failure();

  FailureOr<Operation *> built = buildFromFields(op, operands, loc);
  if (failed(built))
    return failure();
  Operation *created = *built;
  auto type = cast<RankedTensorType>(created->getResult(0).getType());
  if (failed(checkElementCount(op.entry, type.getShape(), "result shape")))
    return failure();
  if (*sharding) {
    if (failed(checkShardingFits(shardingField, *sharding, type,
                                 "value \"" + op.output + "\"")))
      return failure();
    created->setAttr(st.shardingAttrName, *sharding);
  }
  // The pipeline stage the op runs in (docs/pipeline.md).
  if (JVal stageField = op.entry.field("stage"); stageField.present()) {
    FailureOr<int64_t> stage = readInt(stageField);
    if (failed(stage))
      return failure();
    if (*stage < 0)
      return stageField.error() << "a pipeline stage is at least 0, got "
                                << *stage;
    created->setAttr(ShardcDialect::getStageAttrName(),
                     IntegerAttr::get(IntegerType::get(st.ctx, 64), *stage));
  }
  // Catches what the op verifiers check beyond type inference (reshape
  // element counts, broadcast dims) while the entry is still at hand.
  if (failed(
          reportAtEntries(st, fileLoc, [&] { return verify(created, false); })))
    return failure();
  return created;
}
