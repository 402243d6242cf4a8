//===- ShardingAttr.cpp - #shardc.sharding --------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardingVerifier.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace shardc;

#include "shardc/Dialect/ShardcEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "shardc/Dialect/ShardcAttrs.cpp.inc"

void ShardcDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "shardc/Dialect/ShardcAttrs.cpp.inc"
      >();
}

static SmallVector<StringRef> toStrings(ArrayAttr axes) {
  SmallVector<StringRef> out;
  for (Attribute a : axes)
    if (auto s = dyn_cast<StringAttr>(a))
      out.push_back(s.getValue());
  return out;
}

static ArrayAttr toArrayAttr(MLIRContext *ctx, ArrayRef<StringRef> axes) {
  SmallVector<Attribute> attrs;
  for (StringRef a : axes)
    attrs.push_back(StringAttr::get(ctx, a));
  return ArrayAttr::get(ctx, attrs);
}

ShardingAttr ShardingAttr::get(MLIRContext *context, FlatSymbolRefAttr mesh,
                               ArrayRef<SmallVector<StringRef>> dimAxes,
                               ArrayRef<StringRef> partialAxes) {
  SmallVector<ArrayAttr> dims;
  for (const auto &axes : dimAxes)
    dims.push_back(toArrayAttr(context, axes));
  return Base::get(context, mesh, dims, toArrayAttr(context, partialAxes));
}

ShardingAttr ShardingAttr::getReplicated(MLIRContext *ctx,
                                         FlatSymbolRefAttr mesh, size_t rank) {
  SmallVector<ArrayAttr> dims(rank, ArrayAttr::get(ctx, {}));
  return Base::get(ctx, mesh, dims, ArrayAttr::get(ctx, {}));
}

SmallVector<StringRef> ShardingAttr::getDimAxes(size_t dim) const {
  if (dim >= getDims().size())
    return {};
  return toStrings(getDims()[dim]);
}

SmallVector<StringRef> ShardingAttr::getPartialAxes() const {
  return toStrings(getPartial());
}

bool ShardingAttr::isFullyReplicated() const {
  return !isPartial() &&
         llvm::all_of(getDims(), [](ArrayAttr a) { return a.empty(); });
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh,
                                   ArrayRef<ArrayAttr> dims,
                                   ArrayAttr partial) {
  if (!mesh)
    return emitError() << "sharding needs a mesh";
  llvm::StringSet<> seen;
  auto check = [&](ArrayAttr axes, StringRef where) -> LogicalResult {
    if (!axes)
      return emitError() << "sharding has a missing axis list in " << where;
    for (Attribute a : axes) {
      auto s = dyn_cast<StringAttr>(a);
      if (!s || s.getValue().empty())
        return emitError() << "sharding axes must be non-empty strings, got "
                           << a << " in " << where;
      if (!seen.insert(s.getValue()).second)
        return emitError() << "mesh axis \"" << s.getValue()
                           << "\" is used twice in one sharding";
    }
    return success();
  };
  for (auto [i, axes] : llvm::enumerate(dims))
    if (failed(check(axes, "dim " + std::to_string(i))))
      return failure();
  return check(partial, "partial");
}

static ParseResult parseAxisSet(AsmParser &p, SmallVectorImpl<Attribute> &out) {
  return p.parseCommaSeparatedList(
      AsmParser::Delimiter::Braces, [&]() -> ParseResult {
        std::string axis;
        if (p.parseString(&axis))
          return failure();
        out.push_back(StringAttr::get(p.getContext(), axis));
        return success();
      });
}

Attribute ShardingAttr::parse(AsmParser &p, Type) {
  MLIRContext *ctx = p.getContext();
  SMLoc loc = p.getCurrentLocation();
  FlatSymbolRefAttr mesh;
  if (p.parseLess() || p.parseAttribute(mesh) || p.parseComma())
    return {};
  SmallVector<ArrayAttr> dims;
  if (p.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                [&]() -> ParseResult {
                                  SmallVector<Attribute> axes;
                                  if (parseAxisSet(p, axes))
                                    return failure();
                                  dims.push_back(ArrayAttr::get(ctx, axes));
                                  return success();
                                }))
    return {};
  SmallVector<Attribute> partial;
  if (succeeded(p.parseOptionalComma())) {
    if (p.parseKeyword("partial") || p.parseEqual() || parseAxisSet(p, partial))
      return {};
  }
  if (p.parseGreater())
    return {};
  return getChecked([&] { return p.emitError(loc); }, ctx, mesh, dims,
                    ArrayAttr::get(ctx, partial));
}

static void appendAxisSet(llvm::SmallVectorImpl<char> &text, ArrayAttr axes) {
  text.push_back('{');
  for (auto [i, a] : llvm::enumerate(axes)) {
    if (i)
      llvm::append_range(text, StringRef(", "));
    text.push_back('"');
    llvm::append_range(text, cast<StringAttr>(a).getValue());
    text.push_back('"');
  }
  text.push_back('}');
}

/// A symbol name MLIR prints without quotes (its isBareIdentifier).
static bool isBareIdentifier(StringRef name) {
  if (name.empty() || (!llvm::isAlpha(name[0]) && name[0] != '_'))
    return false;
  return llvm::all_of(name.drop_front(), [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
  });
}

void ShardingAttr::print(AsmPrinter &p) const {
  // MLIR prints a dialect attribute into a string (to choose its quoting
  // afterwards), where every piece written is a separate append: the text
  // is built here and written once. A mesh name that needs quoting is
  // printed by MLIR, which knows how.
  llvm::SmallString<64> text;
  text.push_back('<');
  StringRef mesh = getMesh().getValue();
  if (isBareIdentifier(mesh)) {
    text.push_back('@');
    llvm::append_range(text, mesh);
  } else {
    p << text << getMesh();
    text.clear();
  }
  llvm::append_range(text, StringRef(", ["));
  for (auto [i, axes] : llvm::enumerate(getDims())) {
    if (i)
      llvm::append_range(text, StringRef(", "));
    appendAxisSet(text, axes);
  }
  text.push_back(']');
  if (isPartial()) {
    llvm::append_range(text, StringRef(", partial = "));
    appendAxisSet(text, getPartial());
  }
  text.push_back('>');
  p << StringRef(text);
}

//===----------------------------------------------------------------------===//
// Checks that need the mesh and the value's type.
//===----------------------------------------------------------------------===//

/// SymbolTable::getNearestSymbolTable, answering the usual nesting (shardc
/// ops in a func.func in a module) without asking each op whether it has the
/// SymbolTable trait, a search that was most of a lookup's cost. Modules are
/// symbol tables; functions and shardc ops are registered ops that are not.
static Operation *nearestSymbolTable(Operation *from) {
  for (Operation *op = from; op; op = op->getParentOp()) {
    if (isa<ModuleOp>(op))
      return op;
    if (!isa<func::FuncOp>(op) &&
        !isa_and_nonnull<ShardcDialect>(op->getDialect()))
      return SymbolTable::getNearestSymbolTable(op);
  }
  return nullptr;
}

MeshOp shardc::lookupMesh(Operation *from, FlatSymbolRefAttr mesh) {
  if (!mesh)
    return {};
  // SymbolTable::lookupNearestSymbolFrom, reading names through the symbol
  // interface instead of uniquing "sym_name" and searching each op's
  // attributes on every call: this runs for every sharded value whenever a
  // module is verified. As there, the first symbol of the name decides,
  // whether or not it is a mesh.
  Operation *table = nearestSymbolTable(from);
  if (!table || table->getNumRegions() == 0 || table->getRegion(0).empty())
    return {};
  StringAttr name = mesh.getAttr();
  for (Operation &op : table->getRegion(0).front()) {
    if (auto meshOp = dyn_cast<MeshOp>(op)) {
      if (meshOp.getSymNameAttr() == name)
        return meshOp;
    } else if (auto symbol = dyn_cast<SymbolOpInterface>(op)) {
      if (symbol.getNameAttr() == name)
        return {};
    }
  }
  return {};
}

LogicalResult
shardc::verifyShardingForType(ShardingAttr sharding, MeshOp mesh, Type type,
                              function_ref<std::string()> valueName,
                              function_ref<InFlightDiagnostic()> emitError) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return emitError() << "sharding of " << valueName()
                       << " needs a ranked tensor, got " << type;
  if (sharding.getRank() != static_cast<size_t>(tensor.getRank()))
    return emitError() << "sharding of " << valueName() << " has "
                       << sharding.getRank() << " dim entries but " << type
                       << " has rank " << tensor.getRank();
  // The axis lists are walked as attributes: this runs for every sharded
  // value each time a module is verified.
  auto axisSize = [&](Attribute axis) -> FailureOr<int64_t> {
    StringRef name = cast<StringAttr>(axis).getValue();
    int64_t size = mesh.getAxisSize(name);
    if (size < 0)
      return emitError() << "sharding of " << valueName()
                         << " uses unknown mesh axis \"" << name << "\" (mesh @"
                         << mesh.getSymName() << " has axes "
                         << mesh.getAxisNames() << ")";
    return size;
  };
  for (Attribute axis : sharding.getPartial())
    if (failed(axisSize(axis)))
      return failure();
  // Every dim's axes are checked; their product need not divide it: a dim
  // the axes do not divide is padded (docs/sharding.md#uneven-dims).
  for (ArrayAttr axes : sharding.getDims())
    for (Attribute axis : axes)
      if (failed(axisSize(axis)))
        return failure();
  return success();
}
