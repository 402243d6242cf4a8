//===- ShardcOps.cpp - generated op definitions and the mesh op -----------===//
//
// The verifiers, rules and costs of tensor ops live in their family files
// (ContractionOps.cpp, ReductionOps.cpp, LayoutOps.cpp, ConstantOps.cpp,
// ShardingConstraintOps.cpp; elementwise ops in ElementwiseOps.td), those of
// collectives in CollectiveOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardingVerifier.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace shardc;

/// `<@mesh, [...]>`: a sharding attribute without its `#shardc.sharding`
/// prefix, so that sharding_constraint reads like the attribute it carries.
static ParseResult parseShardingBody(OpAsmParser &p, ShardingAttr &sharding) {
  Attribute attr = ShardingAttr::parse(p, Type());
  sharding = dyn_cast_or_null<ShardingAttr>(attr);
  return success(sharding != nullptr);
}

static void printShardingBody(OpAsmPrinter &p, Operation *,
                              ShardingAttr sharding) {
  sharding.print(p);
}

#define GET_OP_CLASSES
#include "shardc/Dialect/ShardcOps.cpp.inc"

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

int64_t MeshOp::getNumDevices() {
  int64_t n = 1;
  for (int64_t s : getAxisSizes())
    n *= s;
  return n;
}

int64_t MeshOp::getAxisIndex(StringRef name) {
  for (auto [i, a] : llvm::enumerate(getAxisNames()))
    if (cast<StringAttr>(a).getValue() == name)
      return static_cast<int64_t>(i);
  return -1;
}

int64_t MeshOp::getAxisSize(StringRef name) {
  int64_t i = getAxisIndex(name);
  return i < 0 ? -1 : getAxisSizes()[i];
}

SmallVector<StringRef> MeshOp::getAxisNameList() {
  SmallVector<StringRef> out;
  for (Attribute a : getAxisNames())
    out.push_back(cast<StringAttr>(a).getValue());
  return out;
}

// shardc.mesh @name ["y"=4, "x"=2]
ParseResult MeshOp::parse(OpAsmParser &p, OperationState &state) {
  StringAttr name;
  if (p.parseSymbolName(name, SymbolTable::getSymbolAttrName(),
                        state.attributes))
    return failure();
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes;
  if (p.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
            std::string axis;
            int64_t size = 0; // set by parseInteger; zero quiets GCC
            if (p.parseString(&axis) || p.parseEqual() || p.parseInteger(size))
              return failure();
            names.push_back(p.getBuilder().getStringAttr(axis));
            sizes.push_back(size);
            return success();
          }))
    return failure();
  if (p.parseOptionalAttrDict(state.attributes))
    return failure();
  state.addAttribute("axis_names", p.getBuilder().getArrayAttr(names));
  state.addAttribute("axis_sizes", p.getBuilder().getDenseI64ArrayAttr(sizes));
  return success();
}

void MeshOp::print(OpAsmPrinter &p) {
  p << " ";
  p.printSymbolName(getSymName());
  p << " [";
  llvm::interleaveComma(
      llvm::zip(getAxisNames(), getAxisSizes()), p, [&](auto pair) {
        p << "\"" << cast<StringAttr>(std::get<0>(pair)).getValue()
          << "\"=" << std::get<1>(pair);
      });
  p << "]";
  p.printOptionalAttrDict(
      (*this)->getAttrs(),
      {SymbolTable::getSymbolAttrName(), "axis_names", "axis_sizes"});
}

LogicalResult MeshOp::verify() {
  if (getAxisNames().size() != getAxisSizes().size())
    return emitOpError("needs one size per axis name");
  if (getAxisNames().empty())
    return emitOpError("needs at least one axis");
  llvm::StringSet<> seen;
  int64_t devices = 1;
  for (auto [nameAttr, size] : llvm::zip(getAxisNames(), getAxisSizes())) {
    StringRef name = cast<StringAttr>(nameAttr).getValue();
    if (name.empty())
      return emitOpError("axis names must be non-empty");
    if (!seen.insert(name).second)
      return emitOpError() << "axis \"" << name << "\" is declared twice";
    if (size < 1)
      return emitOpError() << "axis \"" << name << "\" has size " << size
                           << "; sizes must be at least 1";
    if (size > (int64_t(1) << 20) || devices * size > (int64_t(1) << 20))
      return emitOpError() << "mesh has more than 2^20 devices (axis \"" << name
                           << "\" of size " << size << ")";
    devices *= size;
  }
  return success();
}

bool shardc::hasAddressableSize(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return false;
  int64_t bytes = (tensor.getElementTypeBitWidth() + 7) / 8;
  for (int64_t d : tensor.getShape())
    if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes))
      return false;
  return true;
}
