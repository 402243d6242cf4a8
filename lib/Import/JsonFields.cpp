//===- JsonFields.cpp - located JSON values and their typed readers -------===//

#include "ImportState.h"

#include "shardc/Dialect/ShardingVerifier.h"

#include "llvm/ADT/StringSet.h"

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
                         const JsonPositions &positions)
    : ctx(ctx), filename(StringAttr::get(ctx, filename)), positions(positions),
      lines(text), builder(ctx) {}

FileLineColLoc ImportState::locAt(size_t offset, StringRef path) {
  auto [line, column] = lines.lineAndColumn(offset);
  auto loc = FileLineColLoc::get(filename, line, column);
  // The last path wins: entries are named more precisely (with their output
  // name) once their structure has been checked.
  if (!path.empty())
    paths[loc] = path.str();
  return loc;
}

StringRef ImportState::pathOf(Location loc) const {
  FileLineColLoc file = findFileLoc(loc);
  auto it = file ? paths.find(file) : paths.end();
  return it == paths.end() ? StringRef() : StringRef(it->second);
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

const Json &JVal::nullJson() {
  static const Json null;
  return null;
}

JVal JVal::root(ImportState &state, const Json &json) {
  int node = state.positions.root();
  size_t offset =
      node == JsonPositions::kNone ? 0 : state.positions.offset(node);
  return JVal(state, &json, node, offset, "");
}

FileLineColLoc JVal::loc() const {
  // Only a value with its own position names the location; a missing
  // member borrows its object's, which must keep the object's name.
  return st->locAt(offset, node == JsonPositions::kNone ? "" : pathStr);
}

FileLineColLoc JVal::keyLoc() const {
  if (node == JsonPositions::kNone)
    return loc();
  return st->locAt(st->positions.keyOffset(node));
}

InFlightDiagnostic JVal::error() const {
  InFlightDiagnostic diag = emitError(loc());
  if (!pathStr.empty())
    diag << pathStr << ": ";
  return diag;
}

JVal JVal::field(StringRef key) const {
  std::string path = pathStr.empty() ? key.str() : pathStr + "." + key.str();
  const Json *value = nullptr;
  if (json && json->is_object()) {
    auto it = json->find(key);
    if (it != json->end())
      value = &*it;
  }
  int child = value ? st->positions.member(node, key) : JsonPositions::kNone;
  size_t off =
      child == JsonPositions::kNone ? offset : st->positions.offset(child);
  return JVal(*st, value, child, off, std::move(path));
}

JVal JVal::at(size_t index) const {
  std::string path = pathStr + "[" + std::to_string(index) + "]";
  const auto *list = json ? json->get_ptr<const Json::array_t *>() : nullptr;
  const Json *value = list && index < list->size() ? &(*list)[index] : nullptr;
  int child = st->positions.element(node, index);
  size_t off =
      child == JsonPositions::kNone ? offset : st->positions.offset(child);
  return JVal(*st, value, child, off, std::move(path));
}

JVal JVal::renamed(std::string path) const {
  return JVal(*st, json, node, offset, std::move(path));
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

std::string shardc::jsonimport::describe(const Json &json) {
  switch (json.type()) {
  case Json::value_t::null:
    return "null";
  case Json::value_t::boolean:
    return *json.get_ptr<const bool *>() ? "true" : "false";
  case Json::value_t::string: {
    StringRef s = *json.get_ptr<const std::string *>();
    std::string shown = printable(s.take_front(40));
    return "the string \"" + shown + (s.size() > 40 ? "...\"" : "\"");
  }
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned:
    return "the integer " + json.dump();
  case Json::value_t::number_float:
    return "the number " + json.dump();
  case Json::value_t::object:
    return "an object";
  case Json::value_t::array:
    return "a list";
  default:
    return "an unexpected value";
  }
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
  for (const auto &member : *obj->get_ptr<const Json::object_t *>()) {
    StringRef key = member.first;
    if (llvm::is_contained(allowed, key))
      continue;
    InFlightDiagnostic diag = emitError(obj.field(key).keyLoc());
    if (!obj.path().empty())
      diag << obj.path() << ": ";
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
  if (const auto *s = v->get_ptr<const std::string *>())
    return *s;
  return v.error() << "must be a string, got " << describe(v.get());
}

FailureOr<std::string> shardc::jsonimport::readName(const JVal &v) {
  FailureOr<std::string> s = readString(v);
  if (succeeded(s) && s->empty())
    return v.error() << "must be a non-empty name";
  return s;
}

FailureOr<bool> shardc::jsonimport::readBool(const JVal &v) {
  if (const auto *b = v->get_ptr<const bool *>())
    return *b;
  return v.error() << "must be true or false, got " << describe(v.get());
}

FailureOr<int64_t> shardc::jsonimport::readInt(const JVal &v) {
  // Unsigned first: nlohmann also hands out the signed pointer for an
  // unsigned value, which would reinterpret 2^64-1 as -1.
  if (v->is_number_unsigned()) {
    uint64_t u = *v->get_ptr<const Json::number_unsigned_t *>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return v.error() << "integer " << u << " does not fit in 64 bits";
    return static_cast<int64_t>(u);
  }
  if (v->is_number_integer())
    return static_cast<int64_t>(*v->get_ptr<const Json::number_integer_t *>());
  if (const auto *f = v->get_ptr<const Json::number_float_t *>()) {
    // nlohmann reads integers beyond 64 bits as floating point.
    if (std::isfinite(*f) && std::trunc(*f) == *f && std::fabs(*f) >= 0x1p63)
      return v.error() << "integer " << v->dump() << " does not fit in 64 bits";
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
  if (*name == "f32")
    return Type(b.getF32Type());
  if (*name == "f16")
    return Type(b.getF16Type());
  if (*name == "bf16")
    return Type(b.getBF16Type());
  if (*name == "f64")
    return Type(b.getF64Type());
  return v.error() << "unknown dtype \"" << printable(*name)
                   << "\"; expected one of \"f32\", \"f16\", \"bf16\", "
                      "\"f64\""
                   << suggest(*name, {"f32", "f16", "bf16", "f64"});
}

/// Checks that `axis` names a mesh axis not used yet in this sharding.
static LogicalResult checkShardingAxis(const JVal &at, const std::string &axis,
                                       llvm::StringSet<> &used) {
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

FailureOr<ShardingAttr> shardc::jsonimport::readSharding(const JVal &sharding,
                                                         const JVal &partial) {
  if (!sharding.present()) {
    // Named after the field actually missing ("sharding" or, on a
    // constraint, "result_sharding").
    StringRef field = StringRef(sharding.path()).rsplit('.').second;
    if (partial.present())
      return partial.error() << "needs a \"" << field
                             << "\" next to it (write null for each "
                                "replicated dimension)";
    return ShardingAttr();
  }
  if (!sharding->is_array())
    return sharding.error()
           << "must be a list with one entry per dimension (null, an axis "
              "name, or a list of axis names), got "
           << describe(sharding.get());
  llvm::StringSet<> used;
  // The attribute builder takes StringRefs; `storage` owns the strings.
  std::vector<std::vector<std::string>> storage;
  for (size_t d = 0, e = sharding->size(); d < e; ++d) {
    JVal entry = sharding.at(d);
    std::vector<std::string> axes;
    if (entry->is_string()) {
      axes.push_back(*entry->get_ptr<const std::string *>());
    } else if (entry->is_array()) {
      FailureOr<SmallVector<std::string>> list = readNameList(entry);
      if (failed(list))
        return failure();
      axes.assign(list->begin(), list->end());
    } else if (!entry->is_null()) {
      return entry.error() << "must be null (replicated), a mesh axis name "
                              "or a list of axis names, got "
                           << describe(entry.get());
    }
    for (const std::string &axis : axes)
      if (failed(checkShardingAxis(entry, axis, used)))
        return failure();
    storage.push_back(std::move(axes));
  }
  SmallVector<std::string> partialAxes;
  if (partial.present()) {
    FailureOr<SmallVector<std::string>> list = readNameList(partial);
    if (failed(list))
      return failure();
    for (const std::string &axis : *list)
      if (failed(checkShardingAxis(partial, axis, used)))
        return failure();
    partialAxes = std::move(*list);
  }
  SmallVector<SmallVector<StringRef>> dims;
  for (const auto &axes : storage)
    dims.emplace_back(axes.begin(), axes.end());
  SmallVector<StringRef> partialRefs(partialAxes.begin(), partialAxes.end());
  const MeshInfo &mesh = sharding.state().mesh;
  return ShardingAttr::get(sharding.state().ctx, mesh.ref, dims, partialRefs);
}

LogicalResult shardc::jsonimport::checkShardingFits(const JVal &at,
                                                    ShardingAttr sharding,
                                                    Type type,
                                                    StringRef valueDesc) {
  ImportState &state = at.state();
  return verifyShardingForType(
      sharding, state.mesh.op, type, [&] { return valueDesc.str(); },
      state.spmd, [&] { return at.error(); });
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
