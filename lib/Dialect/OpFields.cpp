//===- OpFields.cpp - the op-fields interface -----------------------------===//
//
// The interface's methods are generated per op (Shardc_Op in
// ShardcDialect.td); only the interface's own definitions live here.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/OpFields.h"

#include "shardc/Dialect/OpFieldsInterface.cpp.inc"

#include "shardc/Dialect/CollectiveOpInterface.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;

std::optional<shardc::OpFields> shardc::getOpFields(OperationName name) {
  if (auto *concept = name.getInterface<OpFieldsOpInterface>())
    return concept->getOpFields();
  return std::nullopt;
}

shardc::ResultTypeSource shardc::getResultTypeSource(OperationName name,
                                                     const OpFields &fields) {
  auto has = [&](OpFieldKind kind) {
    return llvm::any_of(fields.attrs,
                        [&](const OpField &f) { return f.kind == kind; });
  };
  // Before InferTypeOpInterface, which ODS also gives the ops whose result
  // type a trait fixes (SameOperandsAndResultType, AllTypesMatch): those
  // say more precisely where it comes from.
  // axis_index names a mesh too, but has no operand to scale: its type is
  // inferred; send and recv name one but are no collectives: a send's type
  // is its operand's, a recv's is given.
  if (has(OpFieldKind::MeshRef) && fields.numOperands > 0 &&
      name.hasInterface<CollectiveOpInterface>())
    return ResultTypeSource::FromMesh;
  if (name.hasTrait<mlir::OpTrait::SameOperandsAndResultType>())
    return ResultTypeSource::SameAsOperand;
  if (has(OpFieldKind::Elements))
    return ResultTypeSource::FromValue;
  if (name.hasInterface<InferTypeOpInterface>())
    return ResultTypeSource::Inferred;
  return ResultTypeSource::GivenShape;
}
