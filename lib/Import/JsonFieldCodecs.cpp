//===- JsonFieldCodecs.cpp - an op attribute from its JSON field ----------===//
//
// One reader per attribute kind (OpFieldKind), none per op: the field's
// name is the attribute's ODS name. An optional field that is absent gives
// no attribute, so the op's ODS default applies.
//
//===----------------------------------------------------------------------===//

#include "ImportState.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace shardc;
using namespace shardc::jsonimport;
using llvm::SmallVector;
using llvm::StringRef;

FailureOr<ReductionKindAttr> shardc::jsonimport::readReduction(const JVal &v) {
  if (!v.present())
    return ReductionKindAttr();
  FailureOr<std::string> name = readString(v);
  if (failed(name))
    return failure();
  std::optional<ReductionKind> kind = symbolizeReductionKind(*name);
  if (!kind)
    return v.error() << "unknown reduction \"" << printable(*name)
                     << "\"; expected \"sum\" or \"max\"";
  return ReductionKindAttr::get(v.state().ctx, *kind);
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

/// A JSON integer (or, for i1, true/false) as a value of `type`. Returns
/// the reason on failure; the caller locates it.
static std::optional<APInt> toInteger(const JsonNode &json, IntegerType type,
                                      std::string &why) {
  unsigned width = type.getWidth();
  if (width == 1 && json.is_boolean())
    return APInt(1, json.getBool() ? 1 : 0);
  int64_t n = 0;
  if (json.is_number_unsigned() &&
      json.getUnsigned() <=
          static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    n = static_cast<int64_t>(json.getUnsigned());
  else if (json.is_number_integer() && !json.is_number_unsigned())
    n = json.getInteger();
  else {
    why = std::string("must be an integer") +
          (width == 1 ? " 0 or 1 (or true/false)" : "") + ", got " +
          describe(json);
    return std::nullopt;
  }
  bool fits = width == 1 ? (n == 0 || n == 1)
              : width == 32
                  ? n >= std::numeric_limits<int32_t>::min() &&
                        n <= std::numeric_limits<int32_t>::max()
                  : true;
  if (!fits) {
    why = "integer " + std::to_string(n) + " is out of range for i" +
          std::to_string(width);
    return std::nullopt;
  }
  return APInt(width, static_cast<uint64_t>(n), /*isSigned=*/true);
}

/// The integer `value` or `values` of a constant of `type`.
static FailureOr<FieldValue> readIntegerElements(const JVal &e,
                                                 RankedTensorType type,
                                                 IntegerType element) {
  JVal value = e.field("value"), values = e.field("values");
  std::string why;
  if (value.present()) {
    std::optional<APInt> v = toInteger(value.get(), element, why);
    if (!v)
      return value.error() << why;
    return FieldValue{DenseElementsAttr::get(type, *v), type};
  }
  if (!values->is_array())
    return values.error() << "must be a list of integers, got "
                          << describe(values.get());
  int64_t count = type.getNumElements();
  if (static_cast<uint64_t>(count) != values->size())
    return values.error() << "has " << values->size() << " values but shape "
                          << typeStr(type) << " has " << count << " elements";
  const JsonDocument &doc = e.state().document;
  llvm::ArrayRef<int> list = values->children();
  SmallVector<APInt> elements;
  elements.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    std::optional<APInt> v = toInteger(doc[list[i]], element, why);
    if (!v)
      return values.at(i).error() << why;
    elements.push_back(*v);
  }
  return FieldValue{DenseElementsAttr::get(type, elements), type};
}

/// An `Elements` attribute: the entry's "shape", "dtype" and "value" (a
/// splat) or "values" (row-major), which also give the result type.
static FailureOr<FieldValue> readElements(const JVal &e) {
  ImportState &st = e.state();
  FailureOr<SmallVector<int64_t>> shape = readShape(e.field("shape"));
  if (failed(shape))
    return failure();
  FailureOr<Type> dtype = readDtype(e.field("dtype"));
  if (failed(dtype))
    return failure();
  auto type = RankedTensorType::get(*shape, *dtype);
  JVal value = e.field("value"), values = e.field("values");
  if (value.present() == values.present())
    return e.error() << (value.present()
                             ? "give either \"value\" or \"values\", not both"
                             : "needs \"value\" (one number for every "
                               "element) or \"values\" (all elements, "
                               "row-major)");
  if (auto intType = dyn_cast<IntegerType>(*dtype))
    return readIntegerElements(e, type, intType);
  const llvm::fltSemantics &sem = cast<FloatType>(*dtype).getFloatSemantics();
  std::string why;
  if (value.present()) {
    std::optional<APFloat> v = toFloat(value.get(), sem, why);
    if (!v)
      return value.error() << why;
    return FieldValue{DenseElementsAttr::get(type, *v), type};
  }
  if (!values->is_array())
    return values.error() << "must be a list of numbers, got "
                          << describe(values.get());
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
  return FieldValue{DenseElementsAttr::get(type, elements), type};
}

/// A list of integer lists, e.g. `[[0, 1], [1, 0]]`.
static FailureOr<ArrayAttr> readIntLists(const JVal &v) {
  if (!v->is_array())
    return v.error() << "must be a list of lists of integers, got "
                     << describe(v.get());
  Builder b(v.state().ctx);
  SmallVector<Attribute> lists;
  for (size_t i = 0, e = v->size(); i < e; ++i) {
    FailureOr<SmallVector<int64_t>> ints = readIntList(v.at(i));
    if (failed(ints))
      return failure();
    SmallVector<Attribute> list;
    for (int64_t n : *ints)
      list.push_back(b.getI64IntegerAttr(n));
    lists.push_back(b.getArrayAttr(list));
  }
  return b.getArrayAttr(lists);
}

FailureOr<FieldValue> shardc::jsonimport::readField(const OpEntry &op,
                                                    const OpField &field) {
  const JVal &e = op.entry;
  ImportState &st = e.state();
  Builder b(st.ctx);
  JVal v = e.field(field.name);
  // Elements and the mesh are not under the attribute's own name.
  if (field.kind == OpFieldKind::Elements)
    return readElements(e);
  if (field.kind == OpFieldKind::MeshRef)
    return FieldValue{st.mesh.ref, {}};
  if (field.kind == OpFieldKind::Sharding) {
    FailureOr<ShardingAttr> sharding =
        readSharding(v, e.field(partialKeyFor(field.name)));
    if (failed(sharding))
      return failure();
    return FieldValue{*sharding, {}};
  }
  if (!v.present())
    return FieldValue{};
  switch (field.kind) {
  case OpFieldKind::IntList: {
    FailureOr<SmallVector<int64_t>> ints = readIntList(v);
    if (failed(ints))
      return failure();
    return FieldValue{b.getDenseI64ArrayAttr(*ints), {}};
  }
  case OpFieldKind::NameList: {
    // On an op that names the mesh, names are its axes.
    bool axes = llvm::any_of(op.fields.attrs, [](const OpField &f) {
      return f.kind == OpFieldKind::MeshRef;
    });
    FailureOr<SmallVector<std::string>> names =
        axes ? readMeshAxes(v) : readNameList(v);
    if (failed(names))
      return failure();
    SmallVector<StringRef> refs(names->begin(), names->end());
    return FieldValue{b.getStrArrayAttr(refs), {}};
  }
  case OpFieldKind::IntListList: {
    FailureOr<ArrayAttr> lists = readIntLists(v);
    if (failed(lists))
      return failure();
    return FieldValue{*lists, {}};
  }
  case OpFieldKind::Int: {
    FailureOr<int64_t> n = readInt(v);
    if (failed(n))
      return failure();
    return FieldValue{b.getI64IntegerAttr(*n), {}};
  }
  case OpFieldKind::Float: {
    std::string why;
    std::optional<APFloat> x = toFloat(v.get(), APFloat::IEEEsingle(), why);
    if (!x)
      return v.error() << why;
    return FieldValue{b.getF32FloatAttr(x->convertToFloat()), {}};
  }
  case OpFieldKind::String: {
    FailureOr<std::string> s = readName(v);
    if (failed(s))
      return failure();
    return FieldValue{b.getStringAttr(*s), {}};
  }
  case OpFieldKind::Reduction: {
    FailureOr<ReductionKindAttr> kind = readReduction(v);
    if (failed(kind))
      return failure();
    return FieldValue{*kind, {}};
  }
  case OpFieldKind::ElementType: {
    FailureOr<Type> dtype = readDtype(v);
    if (failed(dtype))
      return failure();
    return FieldValue{TypeAttr::get(*dtype), {}};
  }
  case OpFieldKind::Elements:
  case OpFieldKind::MeshRef:
  case OpFieldKind::Sharding:
    break;
  }
  return e.error() << "internal error: no reader for field \"" << field.name
                   << "\"";
}
