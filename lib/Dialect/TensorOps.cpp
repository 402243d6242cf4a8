//===- TensorOps.cpp - type inference and verifiers of tensor ops ---------===//
//
// Every check here guards user input (Debian's LLVM has assertions off), so
// each one emits a diagnostic at the op's location rather than asserting.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ShardingVerifier.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace shardc;

static LogicalResult failInference(std::optional<Location> loc,
                                   const Twine &message) {
  if (loc)
    return emitError(*loc, message);
  return failure();
}

static RankedTensorType asTensor(Value v) {
  return v ? dyn_cast<RankedTensorType>(v.getType()) : RankedTensorType();
}

/// Checks that `dims` are distinct and in [0, rank).
static LogicalResult checkDimList(std::optional<Location> loc,
                                  ArrayRef<int64_t> dims, int64_t rank,
                                  StringRef what) {
  llvm::SmallBitVector seen(rank > 0 ? rank : 0);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return failInference(loc, what + " dimension " + Twine(d) +
                                    " is out of range for rank " + Twine(rank));
    if (seen.test(d))
      return failInference(loc, what + " dimension " + Twine(d) +
                                    " is listed twice");
    seen.set(d);
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

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  auto lhs = asTensor(adaptor.getLhs()), rhs = asTensor(adaptor.getRhs());
  if (!lhs || !rhs)
    return failInference(loc, "matmul operands must be ranked tensors");
  if (lhs.getRank() < 2 || lhs.getRank() != rhs.getRank())
    return failInference(loc, "matmul operands must have the same rank >= 2, "
                              "got " +
                                  Twine(lhs.getRank()) + " and " +
                                  Twine(rhs.getRank()));
  if (lhs.getElementType() != rhs.getElementType())
    return failInference(loc, "matmul operands have different element types");
  int64_t r = lhs.getRank();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < r - 2; ++d) {
    if (lhs.getDimSize(d) != rhs.getDimSize(d))
      return failInference(loc, "matmul batch dimension " + Twine(d) +
                                    " differs: " + Twine(lhs.getDimSize(d)) +
                                    " vs " + Twine(rhs.getDimSize(d)));
    shape.push_back(lhs.getDimSize(d));
  }
  if (lhs.getDimSize(r - 1) != rhs.getDimSize(r - 2))
    return failInference(
        loc, "matmul contracting sizes differ: lhs dim " + Twine(r - 1) +
                 " is " + Twine(lhs.getDimSize(r - 1)) + ", rhs dim " +
                 Twine(r - 2) + " is " + Twine(rhs.getDimSize(r - 2)));
  shape.push_back(lhs.getDimSize(r - 2));
  shape.push_back(rhs.getDimSize(r - 1));
  types.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// DotGeneralOp
//===----------------------------------------------------------------------===//

LogicalResult DotGeneralOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> loc,
                                             Adaptor adaptor,
                                             SmallVectorImpl<Type> &types) {
  auto lhs = asTensor(adaptor.getLhs()), rhs = asTensor(adaptor.getRhs());
  if (!lhs || !rhs)
    return failInference(loc, "dot_general operands must be ranked tensors");
  if (lhs.getElementType() != rhs.getElementType())
    return failInference(loc,
                         "dot_general operands have different element types");
  ArrayRef<int64_t> lb = adaptor.getLhsBatchDims(),
                    rb = adaptor.getRhsBatchDims(),
                    lc = adaptor.getLhsContractingDims(),
                    rc = adaptor.getRhsContractingDims();
  if (lb.size() != rb.size())
    return failInference(loc, "dot_general batch dimension lists differ in "
                              "length");
  if (lc.size() != rc.size())
    return failInference(loc, "dot_general contracting dimension lists "
                              "differ in length");
  SmallVector<int64_t> lAll(lb), rAll(rb);
  lAll.append(lc.begin(), lc.end());
  rAll.append(rc.begin(), rc.end());
  if (failed(checkDimList(loc, lAll, lhs.getRank(), "dot_general lhs")) ||
      failed(checkDimList(loc, rAll, rhs.getRank(), "dot_general rhs")))
    return failure();
  for (size_t i = 0; i < lAll.size(); ++i)
    if (lhs.getDimSize(lAll[i]) != rhs.getDimSize(rAll[i]))
      return failInference(loc, "dot_general paired dimensions lhs " +
                                    Twine(lAll[i]) + " and rhs " +
                                    Twine(rAll[i]) + " differ in size");
  SmallVector<int64_t> shape;
  for (int64_t d : lb)
    shape.push_back(lhs.getDimSize(d));
  for (int64_t d = 0; d < lhs.getRank(); ++d)
    if (!llvm::is_contained(lAll, d))
      shape.push_back(lhs.getDimSize(d));
  for (int64_t d = 0; d < rhs.getRank(); ++d)
    if (!llvm::is_contained(rAll, d))
      shape.push_back(rhs.getDimSize(d));
  types.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferReduce(std::optional<Location> loc, Adaptor adaptor,
                                 SmallVectorImpl<Type> &types) {
  auto input = asTensor(adaptor.getInput());
  if (!input)
    return failInference(loc, "reduce operand must be a ranked tensor");
  if (failed(checkDimList(loc, adaptor.getDims(), input.getRank(), "reduce")))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (!llvm::is_contained(adaptor.getDims(), d))
      shape.push_back(input.getDimSize(d));
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferReduce(loc, adaptor, types);
}

LogicalResult ReduceMaxOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  return inferReduce(loc, adaptor, types);
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  auto input = asTensor(adaptor.getInput());
  if (!input)
    return failInference(loc, "transpose operand must be a ranked tensor");
  ArrayRef<int64_t> perm = adaptor.getPermutation();
  if (static_cast<int64_t>(perm.size()) != input.getRank())
    return failInference(loc, "transpose permutation has " +
                                  Twine(perm.size()) + " entries but rank is " +
                                  Twine(input.getRank()));
  if (failed(checkDimList(loc, perm, input.getRank(), "transpose")))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(input.getDimSize(d));
  types.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp, BroadcastInDimOp, ShardingConstraintOp
//===----------------------------------------------------------------------===//

/// Element count, or -1 on int64 overflow.
static int64_t checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    if (s < 0 || __builtin_mul_overflow(n, s, &n))
      return -1;
  return n;
}

LogicalResult ReshapeOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("operand and result element types differ");
  int64_t a = checkedNumElements(in.getShape()),
          b = checkedNumElements(out.getShape());
  if (a < 0 || b < 0)
    return emitOpError("element count overflows 64 bits");
  if (a != b)
    return emitOpError() << "cannot reshape " << in << " (" << a
                         << " elements) into " << out << " (" << b
                         << " elements)";
  return success();
}

LogicalResult BroadcastInDimOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("operand and result element types differ");
  ArrayRef<int64_t> dims = getDims();
  if (static_cast<int64_t>(dims.size()) != in.getRank())
    return emitOpError() << "dims has " << dims.size()
                         << " entries but the operand has rank "
                         << in.getRank();
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= out.getRank())
      return emitOpError() << "dims[" << i << "] = " << d
                           << " is out of range for result rank "
                           << out.getRank();
    if (i > 0 && dims[i - 1] >= d)
      return emitOpError("dims must be strictly increasing");
  }
  for (auto [i, d] : llvm::enumerate(dims)) {
    int64_t s = in.getDimSize(i);
    if (s != 1 && s != out.getDimSize(d))
      return emitOpError() << "operand dim " << i << " of size " << s
                           << " cannot broadcast to result dim " << d
                           << " of size " << out.getDimSize(d);
  }
  return success();
}

LogicalResult ShardingConstraintOp::verify() {
  ShardingAttr sharding = getSharding();
  MeshOp mesh = lookupMesh(*this, sharding.getMesh());
  if (!mesh)
    return emitOpError() << "names unknown mesh " << sharding.getMesh();
  return verifyShardingForType(
      sharding, mesh, getInput().getType(),
      [&] { return describeValue(getResult()); },
      /*localShapes=*/false, [&] { return emitOpError(); });
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

Operation *ShardcDialect::materializeConstant(OpBuilder &builder,
                                              Attribute value, Type type,
                                              Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
