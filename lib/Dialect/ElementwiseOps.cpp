//===- ElementwiseOps.cpp - building elementwise ops by class -------------===//
//
// An elementwise op is its ODS line: formula, kernel, gradient and cost are
// all in ElementwiseOps.td (Shardc_UnaryElementwiseOp,
// Shardc_BinaryElementwiseOp) and its sharding rule is the identity
// (getElementwiseShardingRule). What remains here is building the ones other
// families' gradient rules, the composites' expansions and the passes use
// (GradientBuilder, TensorOpBuilders.h), each by its class, so that no other
// C++ file names an elementwise op class and a misspelt op does not compile;
// and their `fold`, which runs the op's kernel (ElementwiseKernel.h, the
// interpreter's instantiation too) on constant operands.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/GradientBuilder.h"
#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"

#include "shardc/Dialect/ElementwiseKernel.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace shardc;

namespace {
/// The most elements a fold computes (splats aside): shape arithmetic is
/// tiny, and a fold must not double the memory of a large constant.
constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

/// The elements of a folded operand, or nullopt when it is not a dense
/// constant of element type T and `n` elements.
template <typename T>
std::optional<SmallVector<T>> elementsOf(Attribute operand, int64_t n) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(operand);
  if (!dense || dense.getNumElements() != n)
    return std::nullopt;
  auto values = dense.tryGetValues<T>();
  if (failed(values))
    return std::nullopt;
  return SmallVector<T>(values->begin(), values->end());
}

/// Elementwise op `OpT` on constant operands of element type T, through its
/// kernel. Splat operands are computed on a block of kSplatBlock copies (so
/// that the element takes the kernel's vectorized path, as it does in a
/// run) and give a splat.
template <typename OpT, typename T>
OpFoldResult foldAs(RankedTensorType type, ArrayRef<Attribute> operands) {
  constexpr int64_t kSplatBlock = 16;
  // Most ops the rewrite driver offers have an operand computed at run
  // time: nothing is expanded for them (a splat operand of a large tensor
  // expanded on every try made an auto-shard search many times slower).
  if (!llvm::all_of(operands, [](Attribute a) {
        return isa_and_present<DenseElementsAttr>(a);
      }))
    return {};
  bool allSplat = llvm::all_of(operands, [](Attribute a) {
    return cast<DenseElementsAttr>(a).isSplat();
  });
  int64_t n = type.getNumElements();
  if (allSplat)
    n = kSplatBlock;
  else if (n > kMaxFoldedElements)
    return {};
  SmallVector<SmallVector<T>> in;
  for (Attribute operand : operands) {
    auto dense = dyn_cast_or_null<DenseElementsAttr>(operand);
    if (dense && allSplat) {
      auto value = dense.tryGetValues<T>();
      if (failed(value))
        return {};
      in.emplace_back(n, *value->begin());
      continue;
    }
    std::optional<SmallVector<T>> values = elementsOf<T>(operand, n);
    if (!values)
      return {};
    in.push_back(std::move(*values));
  }
  SmallVector<T> out(n);
  if constexpr (OpT::template hasTrait<shardc::OpTrait::UnaryElementwise>())
    elementwise::computeUnary<OpT>(in[0].data(), out.data(), n);
  else
    elementwise::computeBinary<OpT>(in[0].data(), in[1].data(), out.data(), n);
  if (allSplat)
    return DenseElementsAttr::get(type, ArrayRef<T>(out.front()));
  return DenseElementsAttr::get(type, ArrayRef<T>(out));
}

/// The fold of `op` if it is an `OpT` of the elementwise family, by the
/// element types its kernel computes.
template <typename OpT>
bool foldIf(Operation *op, ArrayRef<Attribute> operands, OpFoldResult &out) {
  constexpr bool unary =
      OpT::template hasTrait<shardc::OpTrait::UnaryElementwise>();
  constexpr bool binary =
      OpT::template hasTrait<shardc::OpTrait::BinaryElementwise>();
  if constexpr (unary || binary) {
    if (!isa<OpT>(op))
      return false;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape())
      return true;
    Type element = type.getElementType();
    if (element.isF32())
      out = foldAs<OpT, float>(type, operands);
    if constexpr (binary) {
      if constexpr (OpT::kAcceptsIntegers) {
        if (element.isSignlessInteger(32))
          out = foldAs<OpT, int32_t>(type, operands);
        if (element.isSignlessInteger(64))
          out = foldAs<OpT, int64_t>(type, operands);
      }
    }
    return true;
  }
  return false;
}

template <typename... Ops>
OpFoldResult foldAny(Operation *op, ArrayRef<Attribute> operands) {
  OpFoldResult out;
  (foldIf<Ops>(op, operands, out) || ...);
  return out;
}
} // namespace

OpFoldResult shardc::foldElementwise(Operation *op,
                                     ArrayRef<Attribute> operands) {
  return foldAny<
#define GET_OP_LIST
#include "shardc/Dialect/ShardcOps.cpp.inc"
      >(op, operands);
}

Value GradientBuilder::add(Value x, Value y) { return build<AddOp>({x, y}); }
Value GradientBuilder::sub(Value x, Value y) { return build<SubOp>({x, y}); }
Value GradientBuilder::mul(Value x, Value y) { return build<MulOp>({x, y}); }
Value GradientBuilder::div(Value x, Value y) { return build<DivOp>({x, y}); }
Value GradientBuilder::neg(Value x) { return build<NegOp>({x}); }
Value GradientBuilder::step(Value x) { return build<StepOp>({x}); }
Value GradientBuilder::tanh(Value x) { return build<TanhOp>({x}); }
Value GradientBuilder::exp(Value x) { return build<ExpOp>({x}); }
Value GradientBuilder::log(Value x) { return build<LogOp>({x}); }
Value GradientBuilder::rsqrt(Value x) { return build<RsqrtOp>({x}); }
Value GradientBuilder::stopGradient(Value x) {
  return build<StopGradientOp>({x});
}

Value shardc::buildAdd(OpBuilder &b, Location loc, Value x, Value y) {
  return GradientBuilder(b, loc).build<AddOp>({x, y});
}
Value shardc::buildSub(OpBuilder &b, Location loc, Value x, Value y) {
  return GradientBuilder(b, loc).build<SubOp>({x, y});
}
Value shardc::buildMul(OpBuilder &b, Location loc, Value x, Value y) {
  return GradientBuilder(b, loc).build<MulOp>({x, y});
}
Value shardc::buildDiv(OpBuilder &b, Location loc, Value x, Value y) {
  return GradientBuilder(b, loc).build<DivOp>({x, y});
}
Value shardc::buildSqrt(OpBuilder &b, Location loc, Value x) {
  return GradientBuilder(b, loc).build<SqrtOp>({x});
}
