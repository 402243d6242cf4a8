//===- JsonFields.cpp - located JSON values and their typed readers -------===//

#include "ImportState.h"

#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Support/Tensor.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <nlohmann/json.hpp>

#include <cmath>

using namespace mlir;
using namespace shardc;
using namespace shardc::jsonimport;
using llvm::SmallVector;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// ImportState, JVal
//===----------------------------------------------------------------------===//

int64_t MeshInfo::axisSize(StringRef axis) const {
  for (auto [name, size] : llvm::zip(axes, sizes))
    if (name == axis)
      return size;
  return -1;
}

std::string MeshInfo::axisList() const {
  std::string out = "[";
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(axes, os, [&](const std::string &a) {
    os << "\"" << printable(a) << "\"";
  });
  os << "]";
  return out;
}

ImportState::ImportState(MLIRContext *ctx, StringRef filename, StringRef text,
                         const JsonDocument &document)
    : ctx(ctx), filename(StringAttr::get(ctx, filename)), document(document),
      lines(text), builder(ctx),
      nameAttrName(StringAttr::get(ctx, ShardcDialect::getNameAttrName())),
      shardingAttrName(
          StringAttr::get(ctx, ShardcDialect::getShardingAttrName())),
      paramAttrName(StringAttr::get(ctx, ShardcDialect::getParamAttrName())) {}

FileLineColLoc ImportState::locAt(size_t offset,
                                  std::optional<ValueName> name) {
  auto [line, column] = lines.lineAndColumn(offset);
  auto loc = FileLineColLoc::get(filename, line, column);
  if (name)
    names[loc] = *name;
  return loc;
}

std::string ImportState::pathOf(Location loc) const {
  FileLineColLoc file = findFileLoc(loc);
  auto it = file ? names.find(file) : names.end();
  return it == names.end() ? std::string() : path(it->second);
}

std::string ImportState::path(ValueName name) const {
  std::string out;
  int top = JsonDocument::kNone;
  if (const EntryName *entry = name.entry) {
    out = path({entry->node, entry->outer}) + " (" + entry->label.str() +
          " \"" + printable(entry->name) + "\")";
    top = entry->node;
  }
  SmallVector<int> steps;
  for (int n = name.node; n != top && document[n].parent >= 0;
       n = document[n].parent)
    steps.push_back(n);
  for (int n : llvm::reverse(steps)) {
    const JsonNode &node = document[n];
    if (document[node.parent].is_object())
      out += (out.empty() ? "" : ".") + node.key.str();
    else
      out += "[" + std::to_string(node.index) + "]";
  }
  return out;
}

const EntryName *ImportState::nameEntry(ValueName name, StringRef label,
                                        StringRef entryName) {
  return &entryNames.emplace_back(
      EntryName{name.node, name.entry, label, entryName.str()});
}

FileLineColLoc shardc::jsonimport::findFileLoc(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file;
  if (auto name = dyn_cast<NameLoc>(loc))
    return findFileLoc(name.getChildLoc());
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return findFileLoc(call.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (FileLineColLoc file = findFileLoc(inner))
        return file;
  return {};
}

JVal JVal::root(ImportState &state) {
  return JVal(state, {state.document.root(), nullptr});
}

const JsonNode &JVal::get() const {
  static const JsonNode null;
  return present() ? st->document[name.node] : null;
}

std::string JVal::path() const {
  std::string base = st->path(name);
  // A missing member of the root is named by its key alone ("mesh").
  if (base.empty() && StringRef(missing).starts_with("."))
    return missing.substr(1);
  return base + missing;
}

bool JVal::ownsLocation() const {
  return present() && st->document[name.node].depth <= kLocatedDepth;
}

size_t JVal::offset() const {
  const JsonDocument &doc = st->document;
  int n = name.node;
  while (doc[n].depth > kLocatedDepth)
    n = doc[n].parent;
  return doc[n].offset;
}

FileLineColLoc JVal::loc() const {
  // Only a value with its own position names the location; a missing
  // member borrows its object's, which must keep the object's name.
  if (!ownsLocation())
    return st->locAt(offset());
  return st->locAt(offset(), name);
}

FileLineColLoc JVal::keyLoc() const {
  if (!ownsLocation())
    return loc();
  return st->locAt(st->document[name.node].keyOffset);
}

InFlightDiagnostic JVal::error() const {
  InFlightDiagnostic diag = emitError(loc());
  if (std::string p = path(); !p.empty())
    diag << p << ": ";
  return diag;
}

JVal JVal::field(StringRef key) const {
  int child =
      present() ? st->document.member(name.node, key) : JsonDocument::kNone;
  if (child != JsonDocument::kNone)
    return JVal(*st, {child, name.entry});
  JVal absent = *this;
  absent.missing += ("." + key).str();
  return absent;
}

JVal JVal::at(size_t index) const {
  int child =
      present() ? st->document.element(name.node, index) : JsonDocument::kNone;
  if (child != JsonDocument::kNone)
    return JVal(*st, {child, name.entry});
  JVal absent = *this;
  absent.missing += "[" + std::to_string(index) + "]";
  return absent;
}

JVal JVal::renamed(StringRef label, StringRef entryName) const {
  if (!present())
    return *this; // only checked entries, which exist, are renamed
  return JVal(*st, {name.node, st->nameEntry(name, label, entryName)});
}

//===----------------------------------------------------------------------===//
// Readers
//===----------------------------------------------------------------------===//

std::string shardc::jsonimport::typeStr(Type type) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << type;
  return out;
}

std::string shardc::jsonimport::numberText(const JsonNode &json) {
  switch (json.kind()) {
  case JsonNode::Kind::Integer:
    return std::to_string(json.getInteger());
  case JsonNode::Kind::Unsigned:
    return std::to_string(json.getUnsigned());
  case JsonNode::Kind::Float:
    // nlohmann's shortest round-trip form ("2.5", "1e+300").
    return nlohmann::json(json.getFloat()).dump();
  default:
    return "";
  }
}

std::string shardc::jsonimport::describe(const JsonNode &json) {
  switch (json.kind()) {
  case JsonNode::Kind::Null:
    return "null";
  case JsonNode::Kind::Bool:
    return json.getBool() ? "true" : "false";
  case JsonNode::Kind::String: {
    StringRef s = json.getString();
    std::string shown = printable(s.take_front(40));
    return "the string \"" + shown + (s.size() > 40 ? "...\"" : "\"");
  }
  case JsonNode::Kind::Integer:
  case JsonNode::Kind::Unsigned:
    return "the integer " + numberText(json);
  case JsonNode::Kind::Float:
    return "the number " + numberText(json);
  case JsonNode::Kind::Object:
    return "an object";
  case JsonNode::Kind::List:
    return "a list";
  }
  return "an unexpected value";
}

std::string shardc::jsonimport::suggest(StringRef word,
                                        llvm::ArrayRef<StringRef> candidates) {
  StringRef best;
  unsigned bestDistance = 3; // only close misspellings are worth a hint
  for (StringRef c : candidates) {
    unsigned d = word.edit_distance(c, /*AllowReplacements=*/true,
                                    /*MaxEditDistance=*/bestDistance);
    // Not when the words share nothing ("x" for "y").
    if (d < bestDistance && d < std::max(word.size(), c.size())) {
      bestDistance = d;
      best = c;
    }
  }
  if (best.empty())
    return "";
  return " (did you mean \"" + best.str() + "\"?)";
}

LogicalResult
shardc::jsonimport::checkFields(const JVal &obj,
                                llvm::ArrayRef<StringRef> allowed,
                                llvm::ArrayRef<StringRef> required) {
  if (!obj->is_object())
    return obj.error() << "must be an object, got " << describe(obj.get());
  const JsonDocument &doc = obj.state().document;
  for (int member : obj->children()) {
    StringRef key = doc[member].key;
    if (llvm::is_contained(allowed, key))
      continue;
    InFlightDiagnostic diag = emitError(obj.field(key).keyLoc());
    if (std::string path = obj.path(); !path.empty())
      diag << path << ": ";
    diag << "unknown field \"" << printable(key) << "\""
         << suggest(key, allowed) << "; allowed fields are ";
    llvm::interleaveComma(allowed, diag,
                          [&](StringRef f) { diag << "\"" << f << "\""; });
    return diag;
  }
  for (StringRef key : required)
    if (!obj.field(key).present())
      return obj.error() << "missing required field \"" << key << "\"";
  return success();
}

FailureOr<std::string> shardc::jsonimport::readString(const JVal &v) {
  if (v->is_string())
    return v->getString().str();
  return v.error() << "must be a string, got " << describe(v.get());
}

FailureOr<std::string> shardc::jsonimport::readName(const JVal &v) {
  FailureOr<std::string> s = readString(v);
  if (succeeded(s) && s->empty())
    return v.error() << "must be a non-empty name";
  return s;
}

FailureOr<bool> shardc::jsonimport::readBool(const JVal &v) {
  if (v->is_boolean())
    return v->getBool();
  return v.error() << "must be true or false, got " << describe(v.get());
}

FailureOr<int64_t> shardc::jsonimport::readInt(const JVal &v) {
  if (v->is_number_unsigned()) {
    uint64_t u = v->getUnsigned();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return v.error() << "integer " << u << " does not fit in 64 bits";
    return static_cast<int64_t>(u);
  }
  if (v->is_number_integer())
    return v->getInteger();
  if (v->is_number_float()) {
    // Integers beyond 64 bits are read as floating point.
    double f = v->getFloat();
    if (std::isfinite(f) && std::trunc(f) == f && std::fabs(f) >= 0x1p63)
      return v.error() << "integer " << numberText(v.get())
                       << " does not fit in 64 bits";
  }
  return v.error() << "must be an integer, got " << describe(v.get());
}

FailureOr<SmallVector<int64_t>> shardc::jsonimport::readIntList(const JVal &v) {
  if (!v->is_array())
    return v.error() << "must be a list of integers, got " << describe(v.get());
  SmallVector<int64_t> out;
  for (size_t i = 0, e = v->size(); i < e; ++i) {
    FailureOr<int64_t> n = readInt(v.at(i));
    if (failed(n))
      return failure();
    out.push_back(*n);
  }
  return out;
}

FailureOr<SmallVector<std::string>>
shardc::jsonimport::readNameList(const JVal &v) {
  if (!v->is_array())
    return v.error() << "must be a list of names, got " << describe(v.get());
  SmallVector<std::string> out;
  for (size_t i = 0, e = v->size(); i < e; ++i) {
    FailureOr<std::string> s = readName(v.at(i));
    if (failed(s))
      return failure();
    out.push_back(std::move(*s));
  }
  return out;
}

LogicalResult shardc::jsonimport::checkElementCount(
    const JVal &at, llvm::ArrayRef<int64_t> shape, StringRef what) {
  int64_t n = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(n, s, &n)) {
      InFlightDiagnostic diag = at.error() << what << " [";
      llvm::interleaveComma(shape, diag);
      return diag << "] has more elements than fit in 64 bits";
    }
  return success();
}

FailureOr<SmallVector<int64_t>> shardc::jsonimport::readShape(const JVal &v) {
  if (!v->is_array())
    return v.error() << "must be a list of dimension sizes, got "
                     << describe(v.get());
  SmallVector<int64_t> shape;
  for (size_t i = 0, e = v->size(); i < e; ++i) {
    JVal dim = v.at(i);
    FailureOr<int64_t> n = readInt(dim);
    if (failed(n))
      return failure();
    if (*n < 0)
      return dim.error() << "dimension size " << *n
                         << " is negative; sizes must be >= 0";
    shape.push_back(*n);
  }
  if (failed(checkElementCount(v, shape, "shape")))
    return failure();
  return shape;
}

FailureOr<Type> shardc::jsonimport::readDtype(const JVal &v) {
  Builder b(v.state().ctx);
  if (!v.present())
    return Type(b.getF32Type());
  FailureOr<std::string> name = readString(v);
  if (failed(name))
    return failure();
  // The dtype names are Support's (the .npy files and the runtime tensors
  // use the same ones); each is also MLIR's spelling of the element type.
  if (std::optional<DType> dtype = parseDType(*name)) {
    switch (*dtype) {
    case DType::F32:
      return Type(b.getF32Type());
    case DType::F16:
      return Type(b.getF16Type());
    case DType::BF16:
      return Type(b.getBF16Type());
    case DType::F64:
      return Type(b.getF64Type());
    case DType::I1:
      return Type(b.getI1Type());
    case DType::I32:
      return Type(b.getI32Type());
    case DType::I64:
      return Type(b.getI64Type());
    }
  }
  return v.error() << "unknown dtype \"" << printable(*name)
                   << "\"; expected one of \"f32\", \"i1\", \"i32\", "
                      "\"i64\", \"f16\", \"bf16\", \"f64\""
                   << suggest(*name,
                              {"f32", "i1", "i32", "i64", "f16", "bf16", "f64"});
}

/// Checks that `axis` names a mesh axis not used yet in this sharding.
static LogicalResult
checkShardingAxis(const JVal &at, StringRef axis,
                  llvm::SmallDenseSet<StringRef, 4> &used) {
  const MeshInfo &mesh = at.state().mesh;
  if (mesh.axisSize(axis) < 0) {
    SmallVector<StringRef> names(mesh.axes.begin(), mesh.axes.end());
    return at.error() << "unknown mesh axis \"" << printable(axis)
                      << "\" (mesh \"" << printable(mesh.name) << "\" has axes "
                      << mesh.axisList() << ")" << suggest(axis, names);
  }
  if (!used.insert(axis).second)
    return at.error() << "mesh axis \"" << printable(axis)
                      << "\" is used twice in one sharding";
  return success();
}

/// readNameList, appending to `out` strings that point into the document.
static LogicalResult readNamesInto(const JVal &v,
                                   SmallVectorImpl<StringRef> &out) {
  if (!v->is_array())
    return v.error() << "must be a list of names, got " << describe(v.get());
  for (size_t i = 0, e = v->size(); i < e; ++i) {
    JVal name = v.at(i);
    if (failed(readName(name)))
      return failure();
    out.push_back(name->getString());
  }
  return success();
}

FailureOr<ShardingAttr> shardc::jsonimport::readSharding(const JVal &sharding,
                                                         const JVal &partial) {
  // null is how JSON writers say "not annotated", as an absent field does.
  if (!sharding.present() || sharding->is_null()) {
    if (!partial.present())
      return ShardingAttr();
    // Named after the field actually missing ("sharding" or, on a
    // constraint, "result_sharding").
    std::string path = sharding.path();
    return partial.error() << "needs a \"" << StringRef(path).rsplit('.').second
                           << "\" next to it (write null for each "
                              "replicated dimension)";
  }
  if (!sharding->is_array())
    return sharding.error()
           << "must be a list with one entry per dimension (null, an axis "
              "name, or a list of axis names), got "
           << describe(sharding.get());
  // Axis names point into the document, which outlives the import.
  llvm::SmallDenseSet<StringRef, 4> used;
  SmallVector<SmallVector<StringRef>> dims(sharding->size());
  for (auto [d, axes] : llvm::enumerate(dims)) {
    JVal entry = sharding.at(d);
    if (entry->is_string()) {
      axes.push_back(entry->getString());
    } else if (entry->is_array()) {
      if (failed(readNamesInto(entry, axes)))
        return failure();
    } else if (!entry->is_null()) {
      return entry.error() << "must be null (replicated), a mesh axis name "
                              "or a list of axis names, got "
                           << describe(entry.get());
    }
    for (StringRef axis : axes)
      if (failed(checkShardingAxis(entry, axis, used)))
        return failure();
  }
  SmallVector<StringRef> partialAxes;
  if (partial.present()) {
    if (failed(readNamesInto(partial, partialAxes)))
      return failure();
    for (StringRef axis : partialAxes)
      if (failed(checkShardingAxis(partial, axis, used)))
        return failure();
  }
  const MeshInfo &mesh = sharding.state().mesh;
  return ShardingAttr::get(sharding.state().ctx, mesh.ref, dims, partialAxes);
}

LogicalResult shardc::jsonimport::checkShardingFits(const JVal &at,
                                                    ShardingAttr sharding,
                                                    Type type,
                                                    StringRef valueDesc) {
  ImportState &state = at.state();
  return verifyShardingForType(
      sharding, state.mesh.op, type, [&] { return valueDesc.str(); },
      [&] { return at.error(); });
}

FailureOr<SmallVector<std::string>>
shardc::jsonimport::readMeshAxes(const JVal &v) {
  FailureOr<SmallVector<std::string>> axes = readNameList(v);
  if (failed(axes))
    return failure();
  if (axes->empty())
    return v.error() << "must list at least one mesh axis";
  llvm::StringSet<> used;
  const MeshInfo &mesh = v.state().mesh;
  SmallVector<StringRef> names(mesh.axes.begin(), mesh.axes.end());
  for (const std::string &axis : *axes) {
    if (mesh.axisSize(axis) < 0)
      return v.error() << "unknown mesh axis \"" << printable(axis)
                       << "\" (mesh \"" << printable(mesh.name)
                       << "\" has axes " << mesh.axisList() << ")"
                       << suggest(axis, names);
    if (!used.insert(axis).second)
      return v.error() << "lists mesh axis \"" << printable(axis) << "\" twice";
  }
  return axes;
}
