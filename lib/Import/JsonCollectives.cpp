//===- JsonCollectives.cpp - collective entries of a JSON graph -----------===//
//
// Collectives have no type inference of their own: their result shape
// depends on the mesh, which they only name by symbol, and the dialect
// checks them in verifySymbolUses once the whole module exists. The
// importer knows the mesh up front, so it builds the op from its fields
// like any other, with its operand's type for a placeholder, and asks the
// dialect (CollectiveShapes.h) whether its attributes fit the group and
// what its result shape is. A problem is reported at the entry's field it
// names, instead of after the fact.
//
//===----------------------------------------------------------------------===//

#include "ImportState.h"

#include "shardc/Dialect/CollectiveShapes.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::jsonimport;
using llvm::SmallVector;
using llvm::StringRef;

/// The size the entry's "size" says a concatenated dim keeps (the rest is
/// the padding of an uneven dim), if it gives one; it must fit the group's
/// blocks.
static FailureOr<std::optional<int64_t>>
readKeptSize(const OpEntry &op, CollectiveOpInterface collective,
             RankedTensorType input, int64_t group) {
  JVal sizeField = op.entry.field("size");
  int64_t dim = getConcatenatedDim(collective);
  if (!sizeField.present() || dim < 0)
    return std::optional<int64_t>();
  FailureOr<int64_t> size = readInt(sizeField);
  if (failed(size))
    return failure();
  int64_t block = input.getDimSize(dim);
  auto [lowest, highest] = concatenatedSizes(block, group);
  if (*size >= lowest && *size <= highest)
    return std::optional<int64_t>(*size);
  InFlightDiagnostic diag = sizeField.error();
  diag << "size " << *size << " does not fit " << group << " blocks of "
       << block << " (dim " << dim << " of input \"" << printable(op.inputs[0])
       << "\" (" << typeStr(input) << ") over axes [";
  llvm::interleaveComma(collective.getAxes(), diag, [&](Attribute axis) {
    diag << "\"" << printable(cast<StringAttr>(axis).getValue()) << "\"";
  });
  diag << "]): ";
  if (lowest == highest)
    diag << "it must be " << highest;
  else
    diag << "it must be between " << lowest << " and " << highest;
  return diag;
}

/// The result type of `collective`, built with its operand's type for a
/// placeholder: its attributes checked against its group.
static FailureOr<Type> collectiveResultType(const OpEntry &op,
                                            CollectiveOpInterface collective) {
  ImportState &st = op.entry.state();
  auto input = cast<RankedTensorType>(collective->getOperand(0).getType());
  // The mesh has at most 2^20 devices, so the product cannot overflow.
  int64_t group = 1;
  for (Attribute axis : collective.getAxes())
    group *= st.mesh.axisSize(cast<StringAttr>(axis).getValue());
  if (std::optional<CollectiveProblem> problem =
          checkCollective(collective, input.getShape(), group)) {
    JVal at = op.entry.field(problem->attribute);
    if (problem->index >= 0)
      at = at.at(problem->index);
    InFlightDiagnostic diag = at.error() << problem->message;
    // A dim's problem is about the operand: say which it is.
    if (problem->index < 0)
      diag << " (input \"" << printable(op.inputs[0]) << "\" is "
           << typeStr(input) << ")";
    return diag;
  }
  FailureOr<std::optional<int64_t>> kept =
      readKeptSize(op, collective, input, group);
  if (failed(kept))
    return failure();
  return RankedTensorType::get(
      getCollectiveResultShape(collective, input.getShape(), group, *kept),
      input.getElementType());
}

FailureOr<Operation *>
shardc::jsonimport::buildCollective(const OpEntry &op, Value input,
                                    const NamedAttrList &attrs, Location loc) {
  ImportState &st = op.entry.state();
  OperationState state(loc, *op.name);
  state.addOperands(input);
  state.addTypes(input.getType());
  state.addAttributes(attrs);
  Operation *created = st.builder.create(state);
  auto collective = dyn_cast<CollectiveOpInterface>(created);
  FailureOr<Type> type =
      collective ? collectiveResultType(op, collective)
                 : FailureOr<Type>(op.entry.error()
                                   << "internal error: \"" << op.mnemonic
                                   << "\" is no collective");
  if (failed(type)) {
    created->erase();
    return failure();
  }
  created->getResult(0).setType(*type);
  return created;
}

bool shardc::jsonimport::collectiveTakesSize(StringRef mnemonic) {
  std::optional<CollectiveKind> kind = symbolizeCollectiveKind(mnemonic);
  return kind && concatenatesBlocks(*kind);
}
