//===- JsonOpBuilders.cpp - op entries of a JSON graph to shardc ops ------===//
//
// Each op kind declares its arity and its op-specific fields; an entry is
// checked against that declaration before the graph is sorted, and built
// once its operands exist. Result types come from the ops' own type
// inference where they have it (so the importer and the verifier agree by
// construction) and are computed here otherwise. Inference is called
// directly rather than through the inferring builders, because those treat
// a failure as fatal.
//
//===----------------------------------------------------------------------===//

#include "ImportState.h"

#include "mlir/IR/Verifier.h"

#include <cmath>

using namespace mlir;
using namespace shardc;
using namespace shardc::jsonimport;
using llvm::SmallVector;
using llvm::StringRef;

namespace {
enum class Kind {
  Unary,
  Binary,
  Matmul,
  DotGeneral,
  ReduceSum,
  ReduceMax,
  Transpose,
  Reshape,
  Broadcast,
  Constant,
  Constraint,
  Collective,
};

struct OpSpec {
  StringRef mnemonic;
  Kind kind;
  unsigned arity;
  /// Fields besides op/inputs/output/sharding/partial.
  llvm::ArrayRef<StringRef> fields;
  /// Which of those (and of sharding/partial) are required.
  llvm::ArrayRef<StringRef> required;
};
} // namespace

static const StringRef kDotFields[] = {"lhs_batch_dims", "rhs_batch_dims",
                                       "lhs_contracting_dims",
                                       "rhs_contracting_dims"};
static const StringRef kDims[] = {"dims"};
static const StringRef kPermutation[] = {"permutation"};
static const StringRef kShape[] = {"shape"};
static const StringRef kDimsShape[] = {"dims", "shape"};
static const StringRef kConstantFields[] = {"shape", "dtype", "value",
                                            "values"};
static const StringRef kConstraintFields[] = {"result_sharding",
                                              "result_partial"};
static const StringRef kSharding[] = {"sharding"};
static const StringRef kAxesDim[] = {"axes", "dim"};
static const StringRef kScatterFields[] = {"axes", "dim", "reduction"};
static const StringRef kAxes[] = {"axes"};
static const StringRef kAllReduceFields[] = {"axes", "reduction"};
static const StringRef kAllToAllFields[] = {"axes", "split_dim", "concat_dim"};
static const StringRef kPermuteFields[] = {"axes", "pairs"};

static const OpSpec kOpSpecs[] = {
    {"relu", Kind::Unary, 1, {}, {}},
    {"gelu", Kind::Unary, 1, {}, {}},
    {"exp", Kind::Unary, 1, {}, {}},
    {"log", Kind::Unary, 1, {}, {}},
    {"neg", Kind::Unary, 1, {}, {}},
    {"tanh", Kind::Unary, 1, {}, {}},
    {"sqrt", Kind::Unary, 1, {}, {}},
    {"rsqrt", Kind::Unary, 1, {}, {}},
    {"sigmoid", Kind::Unary, 1, {}, {}},
    {"step", Kind::Unary, 1, {}, {}},
    {"add", Kind::Binary, 2, {}, {}},
    {"sub", Kind::Binary, 2, {}, {}},
    {"mul", Kind::Binary, 2, {}, {}},
    {"div", Kind::Binary, 2, {}, {}},
    {"max", Kind::Binary, 2, {}, {}},
    {"matmul", Kind::Matmul, 2, {}, {}},
    {"dot_general", Kind::DotGeneral, 2, kDotFields, {}},
    {"reduce_sum", Kind::ReduceSum, 1, kDims, kDims},
    {"reduce_max", Kind::ReduceMax, 1, kDims, kDims},
    {"transpose", Kind::Transpose, 1, kPermutation, kPermutation},
    {"reshape", Kind::Reshape, 1, kShape, kShape},
    {"broadcast_in_dim", Kind::Broadcast, 1, kDimsShape, kDimsShape},
    {"constant", Kind::Constant, 0, kConstantFields, kShape},
    {"sharding_constraint", Kind::Constraint, 1, kConstraintFields, kSharding},
    {"all_gather", Kind::Collective, 1, kAxesDim, kAxesDim},
    {"reduce_scatter", Kind::Collective, 1, kScatterFields, kAxesDim},
    {"all_reduce", Kind::Collective, 1, kAllReduceFields, kAxes},
    {"all_to_all", Kind::Collective, 1, kAllToAllFields, kAllToAllFields},
    {"all_slice", Kind::Collective, 1, kAxesDim, kAxesDim},
    {"collective_permute", Kind::Collective, 1, kPermuteFields, kPermuteFields},
};

static const OpSpec *lookupSpec(StringRef mnemonic) {
  for (const OpSpec &spec : kOpSpecs)
    if (spec.mnemonic == mnemonic)
      return &spec;
  return nullptr;
}

llvm::ArrayRef<StringRef> shardc::jsonimport::opMnemonics() {
  static const SmallVector<StringRef> names = [] {
    SmallVector<StringRef> out;
    for (const OpSpec &spec : kOpSpecs)
      out.push_back(spec.mnemonic);
    return out;
  }();
  return names;
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
  const OpSpec *spec = lookupSpec(*mnemonic);
  if (!spec) {
    InFlightDiagnostic diag = kindField.error()
                              << "unknown op \"" << printable(*mnemonic) << "\""
                              << suggest(*mnemonic, opMnemonics())
                              << "; known ops are ";
    llvm::interleaveComma(opMnemonics(), diag);
    return diag;
  }
  JVal outputField = entry.field("output");
  if (!outputField.present())
    return entry.error() << "missing required field \"output\"";
  FailureOr<std::string> output = readName(outputField);
  if (failed(output))
    return failure();

  // From here on the entry is named by its output, which is what a user
  // searches the file for.
  JVal named = entry.renamed("output", *output);
  SmallVector<StringRef> allowed = {"op", "inputs", "output", "sharding",
                                    "partial"};
  allowed.append(spec->fields.begin(), spec->fields.end());
  SmallVector<StringRef> required = {"op", "output"};
  if (spec->kind != Kind::Constant)
    required.push_back("inputs");
  required.append(spec->required.begin(), spec->required.end());
  if (failed(checkFields(named, allowed, required)))
    return failure();

  OpEntry op{named, *mnemonic, *output, {}, {}};
  JVal inputs = named.field("inputs");
  if (inputs.present()) {
    FailureOr<SmallVector<std::string>> names = readNameList(inputs);
    if (failed(names))
      return failure();
    op.inputs = std::move(*names);
    for (size_t i = 0; i < op.inputs.size(); ++i)
      op.inputEntries.push_back(inputs.at(i));
  }
  if (op.inputs.size() != spec->arity) {
    JVal at = inputs.present() ? inputs : named;
    InFlightDiagnostic diag = at.error() << "\"" << spec->mnemonic << "\" ";
    if (spec->arity == 0)
      return diag << "takes no inputs, got " << op.inputs.size();
    return diag << "takes " << spec->arity
                << (spec->arity == 1 ? " input" : " inputs") << ", got "
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

template <typename OpTy>
static FailureOr<Type> inferResult(const OpEntry &op, Location loc,
                                   llvm::ArrayRef<Value> operands,
                                   const typename OpTy::Properties &props) {
  ImportState &st = op.entry.state();
  SmallVector<Type, 1> types;
  LogicalResult ok = reportAtEntries(
      st, findFileLoc(loc),
      [&] {
        typename OpTy::Adaptor adaptor(ValueRange(operands), DictionaryAttr(),
                                       props);
        return OpTy::inferReturnTypes(st.ctx, loc, adaptor, types);
      },
      [&] { return describeOperands(op, operands); });
  if (failed(ok) || types.size() != 1)
    return failure();
  return types.front();
}

static FailureOr<DenseI64ArrayAttr> readDimsAttr(const JVal &v) {
  if (!v.present())
    return DenseI64ArrayAttr::get(v.state().ctx, {});
  FailureOr<SmallVector<int64_t>> dims = readIntList(v);
  if (failed(dims))
    return failure();
  return DenseI64ArrayAttr::get(v.state().ctx, *dims);
}

/// A JSON number (or "inf", "-inf", "nan") as a value of `sem`. Returns the
/// reason on failure; the caller locates it.
static std::optional<APFloat>
toFloat(const JsonNode &json, const llvm::fltSemantics &sem, std::string &why) {
  if (json.is_string()) {
    StringRef s = json.getString();
    if (s == "inf" || s == "-inf")
      return APFloat::getInf(sem, /*Negative=*/s == "-inf");
    if (s == "nan")
      return APFloat::getQNaN(sem);
  }
  if (!json.is_number()) {
    why = "must be a number (or \"inf\", \"-inf\", \"nan\"), got " +
          describe(json);
    return std::nullopt;
  }
  double d = 0;
  if (json.is_number_float())
    d = json.getFloat();
  else if (json.is_number_unsigned())
    d = static_cast<double>(json.getUnsigned());
  else
    d = static_cast<double>(json.getInteger());
  APFloat value(d);
  bool losesInfo = false;
  APFloat::opStatus status =
      value.convert(sem, APFloat::rmNearestTiesToEven, &losesInfo);
  if (!std::isfinite(d) || (status & APFloat::opOverflow)) {
    why = "number " + numberText(json) + " is out of range for the dtype";
    return std::nullopt;
  }
  return value;
}

static FailureOr<Operation *> buildConstant(const OpEntry &op, Location loc) {
  ImportState &st = op.entry.state();
  FailureOr<SmallVector<int64_t>> shape = readShape(op.entry.field("shape"));
  if (failed(shape))
    return failure();
  FailureOr<Type> dtype = readDtype(op.entry.field("dtype"));
  if (failed(dtype))
    return failure();
  auto type = RankedTensorType::get(*shape, *dtype);
  const llvm::fltSemantics &sem = cast<FloatType>(*dtype).getFloatSemantics();
  JVal value = op.entry.field("value"), values = op.entry.field("values");
  if (value.present() == values.present())
    return op.entry.error()
           << (value.present() ? "give either \"value\" or \"values\", not both"
                               : "needs \"value\" (one number for every "
                                 "element) or \"values\" (all elements, "
                                 "row-major)");
  std::string why;
  DenseElementsAttr attr;
  if (value.present()) {
    std::optional<APFloat> v = toFloat(value.get(), sem, why);
    if (!v)
      return value.error() << why;
    attr = DenseElementsAttr::get(type, *v);
  } else {
    if (!values->is_array())
      return values.error()
             << "must be a list of numbers, got " << describe(values.get());
    int64_t count = type.getNumElements();
    if (static_cast<uint64_t>(count) != values->size())
      return values.error() << "has " << values->size() << " values but shape "
                            << typeStr(type) << " has " << count << " elements";
    // Elements are read without a JVal each: constants can be large.
    const JsonDocument &doc = st.document;
    llvm::ArrayRef<int> list = values->children();
    SmallVector<APFloat> elements;
    elements.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      std::optional<APFloat> v = toFloat(doc[list[i]], sem, why);
      if (!v)
        return values.at(i).error() << why;
      elements.push_back(*v);
    }
    attr = DenseElementsAttr::get(type, elements);
  }
  return ConstantOp::create(st.builder, loc, type, attr).getOperation();
}

/// Builds every op kind but the collectives (JsonCollectives.cpp).
static FailureOr<Operation *> buildTensorOp(const OpSpec &spec,
                                            const OpEntry &op,
                                            llvm::ArrayRef<Value> operands,
                                            Location loc) {
  ImportState &st = op.entry.state();
  OpBuilder &b = st.builder;
  const JVal &e = op.entry;
  switch (spec.kind) {
  case Kind::Unary:
  case Kind::Binary: {
    Type type = operands[0].getType();
    if (spec.kind == Kind::Binary && operands[1].getType() != type)
      return e.error() << "operands of \"" << spec.mnemonic
                       << "\" have different types: \""
                       << printable(op.inputs[0]) << "\" is " << typeStr(type)
                       << " but \"" << printable(op.inputs[1]) << "\" is "
                       << typeStr(operands[1].getType())
                       << " (elementwise ops do not broadcast; use "
                          "broadcast_in_dim)";
    OperationState state(loc, "shardc." + spec.mnemonic.str());
    state.addOperands(operands);
    state.addTypes(type);
    return b.create(state);
  }
  case Kind::Matmul: {
    FailureOr<Type> type = inferResult<MatmulOp>(op, loc, operands, {});
    if (failed(type))
      return failure();
    return MatmulOp::create(b, loc, *type, operands[0], operands[1])
        .getOperation();
  }
  case Kind::DotGeneral: {
    DotGeneralOp::Properties props;
    FailureOr<DenseI64ArrayAttr> lb = readDimsAttr(e.field("lhs_batch_dims"));
    FailureOr<DenseI64ArrayAttr> rb = readDimsAttr(e.field("rhs_batch_dims"));
    FailureOr<DenseI64ArrayAttr> lc =
        readDimsAttr(e.field("lhs_contracting_dims"));
    FailureOr<DenseI64ArrayAttr> rc =
        readDimsAttr(e.field("rhs_contracting_dims"));
    if (failed(lb) || failed(rb) || failed(lc) || failed(rc))
      return failure();
    props.setLhsBatchDims(*lb);
    props.setRhsBatchDims(*rb);
    props.setLhsContractingDims(*lc);
    props.setRhsContractingDims(*rc);
    FailureOr<Type> type = inferResult<DotGeneralOp>(op, loc, operands, props);
    if (failed(type))
      return failure();
    return DotGeneralOp::create(b, loc, TypeRange{*type}, operands, props)
        .getOperation();
  }
  case Kind::ReduceSum:
  case Kind::ReduceMax: {
    FailureOr<DenseI64ArrayAttr> dims = readDimsAttr(e.field("dims"));
    if (failed(dims))
      return failure();
    if (spec.kind == Kind::ReduceSum) {
      ReduceSumOp::Properties props;
      props.setDims(*dims);
      FailureOr<Type> type = inferResult<ReduceSumOp>(op, loc, operands, props);
      if (failed(type))
        return failure();
      return ReduceSumOp::create(b, loc, TypeRange{*type}, operands, props)
          .getOperation();
    }
    ReduceMaxOp::Properties props;
    props.setDims(*dims);
    FailureOr<Type> type = inferResult<ReduceMaxOp>(op, loc, operands, props);
    if (failed(type))
      return failure();
    return ReduceMaxOp::create(b, loc, TypeRange{*type}, operands, props)
        .getOperation();
  }
  case Kind::Transpose: {
    FailureOr<DenseI64ArrayAttr> perm = readDimsAttr(e.field("permutation"));
    if (failed(perm))
      return failure();
    TransposeOp::Properties props;
    props.setPermutation(*perm);
    FailureOr<Type> type = inferResult<TransposeOp>(op, loc, operands, props);
    if (failed(type))
      return failure();
    return TransposeOp::create(b, loc, TypeRange{*type}, operands, props)
        .getOperation();
  }
  case Kind::Reshape:
  case Kind::Broadcast: {
    // The target shape is given; the op verifiers check it against the
    // operand (element count, broadcastable dims).
    FailureOr<SmallVector<int64_t>> shape = readShape(e.field("shape"));
    if (failed(shape))
      return failure();
    auto input = cast<RankedTensorType>(operands[0].getType());
    auto type = RankedTensorType::get(*shape, input.getElementType());
    if (spec.kind == Kind::Reshape)
      return ReshapeOp::create(b, loc, type, operands[0]).getOperation();
    FailureOr<DenseI64ArrayAttr> dims = readDimsAttr(e.field("dims"));
    if (failed(dims))
      return failure();
    return BroadcastInDimOp::create(b, loc, type, operands[0], *dims)
        .getOperation();
  }
  case Kind::Constant:
    return buildConstant(op, loc);
  case Kind::Constraint: {
    JVal shardingField = e.field("sharding");
    FailureOr<ShardingAttr> sharding =
        readSharding(shardingField, e.field("partial"));
    if (failed(sharding))
      return failure();
    if (failed(checkShardingFits(shardingField, *sharding,
                                 operands[0].getType(),
                                 "value \"" + op.output + "\"")))
      return failure();
    return ShardingConstraintOp::create(b, loc, operands[0].getType(),
                                        operands[0], *sharding)
        .getOperation();
  }
  case Kind::Collective:
    break;
  }
  return buildCollective(op, operands[0], loc);
}

FailureOr<Operation *>
shardc::jsonimport::buildOp(const OpEntry &op, llvm::ArrayRef<Value> operands) {
  const OpSpec *spec = lookupSpec(op.mnemonic);
  if (!spec || operands.size() != spec->arity)
    return op.entry.error() << "internal error: unchecked op entry";
  ImportState &st = op.entry.state();
  FileLineColLoc fileLoc = op.entry.loc();
  Location loc = NameLoc::get(StringAttr::get(st.ctx, op.output), fileLoc);

  // On a sharding_constraint, "sharding" is the constraint itself; the
  // annotation of its result, if any, has its own fields.
  bool constraint = spec->kind == Kind::Constraint;
  JVal shardingField =
      op.entry.field(constraint ? "result_sharding" : "sharding");
  FailureOr<ShardingAttr> sharding = readSharding(
      shardingField, op.entry.field(constraint ? "result_partial" : "partial"));
  if (failed(sharding))
    return failure();

  FailureOr<Operation *> built = buildTensorOp(*spec, op, operands, loc);
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
  // Catches what the op verifiers check beyond type inference (reshape
  // element counts, broadcast dims) while the entry is still at hand.
  if (failed(
          reportAtEntries(st, fileLoc, [&] { return verify(created, false); })))
    return failure();
  return created;
}
