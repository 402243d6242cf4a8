//===- JsonCollectives.cpp - collective entries of a JSON graph -----------===//
//
// Collectives have no type inference of their own (their result shape
// depends on the mesh, which they only name by symbol, and the dialect checks
// them in verifySymbolUses once the whole module exists). The importer knows
// the mesh up front, so it computes the result shape here and reports bad
// axes, dims and divisibility at the entry instead of after the fact.
//
// This is the one part of the importer that knows ops, by mnemonic: how a
// collective's result shape follows from its group belongs to the op (a
// collective op interface), and moves there once the Dialect has one.
//
//===----------------------------------------------------------------------===//

#include "ImportState.h"

#include "shardc/Dialect/UnevenDims.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace shardc;
using namespace shardc::jsonimport;
using llvm::SmallVector;
using llvm::StringRef;

namespace {
/// Result-shape arithmetic of one collective entry.
class CollectiveShape {
public:
  CollectiveShape(const OpEntry &op, RankedTensorType input, int64_t group,
                  std::string axesDesc)
      : op(op), input(input), shape(input.getShape()), group(group),
        axesDesc(std::move(axesDesc)) {}

  /// Reads dimension field `name`, which must index the input.
  FailureOr<int64_t> readDim(StringRef name) {
    JVal field = op.entry.field(name);
    FailureOr<int64_t> dim = readInt(field);
    if (failed(dim))
      return failure();
    if (*dim < 0 || *dim >= input.getRank())
      return field.error() << name << " " << *dim
                           << " is out of range: input \""
                           << printable(op.inputs[0]) << "\" is "
                           << typeStr(input) << " (rank " << input.getRank()
                           << ")";
    return dim;
  }

  /// The group splits dim `d` (reduce_scatter, all_slice, all_to_all):
  /// blocks of ceil(size / group), the last ones padded.
  void divide(int64_t d) { shape[d] = paddedBlockSize(shape[d], group); }

  /// The group concatenates along dim `d` (all_gather, all_to_all): the
  /// group's blocks end to end, or, with "size", the first `size` elements
  /// of them (the rest is the padding of an uneven dim).
  LogicalResult multiply(StringRef field, int64_t d) {
    int64_t block = shape[d];
    if (__builtin_mul_overflow(block, group, &shape[d]))
      return op.entry.field(field).error()
             << "gathering dim " << d << " over " << group
             << " devices overflows 64 bits";
    JVal sizeField = op.entry.field("size");
    if (!sizeField.present())
      return success();
    FailureOr<int64_t> size = readInt(sizeField);
    if (failed(size))
      return failure();
    // Blocks of `block` hold a dim of size s exactly when ceil(s / group)
    // is `block`: s in [(block - 1) * group + 1, block * group].
    if (*size < 0 || paddedBlockSize(*size, group) != block) {
      InFlightDiagnostic diag = sizeField.error();
      diag << "size " << *size << " does not fit " << group << " blocks of "
           << block << " (dim " << d << " of input \""
           << printable(op.inputs[0]) << "\" (" << typeStr(input)
           << ") over axes " << axesDesc << "): ";
      if (block == 0 || group == 1)
        diag << "it must be " << shape[d];
      else
        diag << "it must be between " << (block - 1) * group + 1 << " and "
             << shape[d];
      return diag;
    }
    shape[d] = *size;
    return success();
  }

  RankedTensorType result() const {
    return RankedTensorType::get(shape, input.getElementType());
  }

private:
  const OpEntry &op;
  RankedTensorType input;
  SmallVector<int64_t> shape;
  int64_t group;
  std::string axesDesc;
};
} // namespace

/// "pairs": [[source, target], ...] with group indices, each source and each
/// target at most once. Built as nested integer arrays, which is what the
/// op's textual form `pairs = [[0, 1], [1, 0]]` parses to.
static FailureOr<ArrayAttr> readPairs(const JVal &v, int64_t group) {
  if (!v->is_array())
    return v.error() << "must be a list of [source, target] pairs, got "
                     << describe(v.get());
  Builder b(v.state().ctx);
  llvm::DenseSet<int64_t> sources, targets;
  SmallVector<Attribute> pairs;
  for (size_t i = 0, e = v->size(); i < e; ++i) {
    JVal pairField = v.at(i);
    FailureOr<SmallVector<int64_t>> pair = readIntList(pairField);
    if (failed(pair))
      return failure();
    if (pair->size() != 2)
      return pairField.error() << "must be a [source, target] pair, got "
                               << pair->size() << " numbers";
    int64_t source = (*pair)[0], target = (*pair)[1];
    if (source < 0 || source >= group || target < 0 || target >= group)
      return pairField.error() << "pair [" << source << ", " << target
                               << "] is outside the group of size " << group;
    if (!sources.insert(source).second)
      return pairField.error() << "source " << source << " appears twice";
    if (!targets.insert(target).second)
      return pairField.error() << "target " << target << " appears twice";
    pairs.push_back(b.getArrayAttr(
        {b.getI64IntegerAttr(source), b.getI64IntegerAttr(target)}));
  }
  return b.getArrayAttr(pairs);
}

FailureOr<Operation *>
shardc::jsonimport::buildCollective(const OpEntry &op,
                                    llvm::ArrayRef<Value> operands,
                                    Location loc) {
  if (operands.size() != 1)
    return op.entry.error() << "internal error: unchecked op entry";
  Value input = operands.front();
  const JVal &e = op.entry;
  ImportState &st = e.state();
  OpBuilder &b = st.builder;
  FailureOr<SmallVector<std::string>> axes = readMeshAxes(e.field("axes"));
  if (failed(axes))
    return failure();
  // The mesh has at most 2^20 devices, so the product cannot overflow.
  int64_t group = 1;
  std::string axesDesc = "[";
  SmallVector<StringRef> axisRefs;
  for (const std::string &axis : *axes) {
    group *= st.mesh.axisSize(axis);
    axesDesc += (axisRefs.empty() ? "\"" : ", \"") + printable(axis) + "\"";
    axisRefs.push_back(axis);
  }
  axesDesc += "]";
  ArrayAttr axesAttr = b.getStrArrayAttr(axisRefs);
  FlatSymbolRefAttr mesh = st.mesh.ref;
  auto inputType = cast<RankedTensorType>(input.getType());
  CollectiveShape shape(op, inputType, group, axesDesc);
  StringRef kind = op.mnemonic;
  // Built from the op's name and named attributes: the ODS names are the
  // JSON field names.
  auto create = [&](Type type,
                    llvm::ArrayRef<NamedAttribute> fields) -> Operation * {
    OperationState state(loc, *op.name);
    state.addOperands(input);
    state.addTypes(type);
    state.addAttribute("mesh", mesh);
    state.addAttribute("axes", axesAttr);
    state.addAttributes(fields);
    return b.create(state);
  };
  auto attr = [&](StringRef name, Attribute value) {
    return NamedAttribute(b.getStringAttr(name), value);
  };
  auto reductionAttrs = [&](ReductionKindAttr reduction) {
    SmallVector<NamedAttribute, 1> out;
    if (reduction)
      out.push_back(attr("reduction", reduction));
    return out;
  };

  if (kind == "all_reduce") {
    FailureOr<ReductionKindAttr> reduction =
        readReduction(e.field("reduction"));
    if (failed(reduction))
      return failure();
    return create(inputType, reductionAttrs(*reduction));
  }
  if (kind == "collective_permute") {
    FailureOr<ArrayAttr> pairs = readPairs(e.field("pairs"), group);
    if (failed(pairs))
      return failure();
    return create(inputType, {attr("pairs", *pairs)});
  }
  if (kind == "all_to_all") {
    FailureOr<int64_t> split = shape.readDim("split_dim");
    FailureOr<int64_t> concat = shape.readDim("concat_dim");
    if (failed(split) || failed(concat))
      return failure();
    if (*split == *concat)
      return e.field("concat_dim").error()
             << "split_dim and concat_dim must differ (both are " << *split
             << ")";
    shape.divide(*split);
    if (failed(shape.multiply("concat_dim", *concat)))
      return failure();
    return create(shape.result(),
                  {attr("split_dim", b.getI64IntegerAttr(*split)),
                   attr("concat_dim", b.getI64IntegerAttr(*concat))});
  }

  // all_gather, reduce_scatter, all_slice: one "dim".
  FailureOr<int64_t> dim = shape.readDim("dim");
  if (failed(dim))
    return failure();
  IntegerAttr dimAttr = b.getI64IntegerAttr(*dim);
  if (kind == "all_gather") {
    if (failed(shape.multiply("dim", *dim)))
      return failure();
    return create(shape.result(), {attr("dim", dimAttr)});
  }
  shape.divide(*dim);
  if (kind == "all_slice")
    return create(shape.result(), {attr("dim", dimAttr)});
  FailureOr<ReductionKindAttr> reduction = readReduction(e.field("reduction"));
  if (failed(reduction))
    return failure();
  SmallVector<NamedAttribute, 2> fields = {attr("dim", dimAttr)};
  fields.append(reductionAttrs(*reduction));
  return create(shape.result(), fields);
}

bool shardc::jsonimport::collectiveTakesSize(StringRef mnemonic) {
  return mnemonic == "all_gather" || mnemonic == "all_to_all";
}
