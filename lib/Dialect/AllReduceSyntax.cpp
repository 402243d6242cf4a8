//===- AllReduceSyntax.cpp - hand-written assembly of shardc.all_reduce ---===//
//
// `shardc.all_reduce %x on @mesh axes = ["a"] attr-dict : type`, exactly the
// syntax its declarative format had. It is written by hand because the
// partitioner emits one per reduction and the generated printer built the
// op's whole attribute dictionary (its properties included) just to leave
// out the default reduction kind: a twentieth of printing a partitioned
// model. The parser is the one ODS generated for that format.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace shardc;

ParseResult AllReduceOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand input;
  FlatSymbolRefAttr mesh;
  ArrayAttr axes;
  NoneType none = parser.getBuilder().getType<NoneType>();
  if (parser.parseOperand(input) || parser.parseKeyword("on") ||
      parser.parseCustomAttributeWithFallback(mesh, none))
    return failure();
  if (mesh)
    result.getOrAddProperties<Properties>().mesh = mesh;
  if (parser.parseKeyword("axes") || parser.parseEqual() ||
      parser.parseCustomAttributeWithFallback(axes, none))
    return failure();
  if (axes)
    result.getOrAddProperties<Properties>().axes = axes;
  SMLoc attrLoc = parser.getCurrentLocation();
  if (parser.parseOptionalAttrDict(result.attributes) ||
      failed(verifyInherentAttrs(result.name, result.attributes, [&]() {
        return parser.emitError(attrLoc)
               << "'" << result.name.getStringRef() << "' op ";
      })))
    return failure();
  RankedTensorType type;
  if (parser.parseColon() || parser.parseCustomTypeWithFallback(type))
    return failure();
  result.addTypes(type);
  return parser.resolveOperand(input, type, result.operands);
}

void AllReduceOp::print(OpAsmPrinter &p) {
  p << ' ' << getInput() << " on ";
  p.printAttributeWithoutType(getMeshAttr());
  p << " axes = ";
  p.printAttributeWithoutType(getAxesAttr());
  // Mesh and axes are printed above and the reduction is left out when it
  // is the default, so with a default reduction the dictionary holds just
  // the discardable attributes, which the op stores apart from its
  // properties: no dictionary needs building.
  ReductionKindAttr kind = getReductionAttr();
  if (!kind || kind.getValue() == ReductionKind::Sum)
    p.printOptionalAttrDict((*this)->getDiscardableAttrDictionary().getValue());
  else
    p.printOptionalAttrDict((*this)->getAttrs(), {"mesh", "axes"});
  p << " : ";
  p.printStrippedAttrOrType(getResult().getType());
}
