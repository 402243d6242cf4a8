//===- GradientBuilder.h - the ops gradient rules are made of ---*- C++ -*-===//
//
// Gradient rules (DifferentiableOpInterface) build their cotangents out of
// ordinary shardc ops, all at one location. The elementwise ops' rules are
// expressions over this builder written in their ODS definitions
// (`gb.mul(g, gb.step(x))` is relu's), and the composites' expansions are
// built with it too. Each elementwise op is built by its class, so a
// misspelt op is a compile error, not a verifier error at run time: the
// ops other families' rules use have a method here, defined with the
// elementwise ops in lib/Dialect/ElementwiseOps.cpp; a rule in
// ElementwiseOps.td, the family's own file, builds any other of them with
// `build<OpClass>` (`gb.build<CosOp>({x})` is sin's). This header is
// included before the op classes are declared, so it names none.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_GRADIENTBUILDER_H
#define SHARDC_DIALECT_GRADIENTBUILDER_H

#include "shardc/Dialect/TensorOpBuilders.h"

#include "mlir/IR/BuiltinTypes.h"

namespace shardc {

class GradientBuilder {
public:
  GradientBuilder(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  /// A constant of `like`'s type with every element `v`.
  mlir::Value splat(mlir::Value like, double v) {
    return buildSplatConstant(b, loc, like.getType(), v);
  }
  mlir::Value add(mlir::Value x, mlir::Value y);
  mlir::Value sub(mlir::Value x, mlir::Value y);
  mlir::Value mul(mlir::Value x, mlir::Value y);
  mlir::Value div(mlir::Value x, mlir::Value y);
  mlir::Value neg(mlir::Value x);
  mlir::Value step(mlir::Value x);
  mlir::Value tanh(mlir::Value x);
  mlir::Value exp(mlir::Value x);
  mlir::Value log(mlir::Value x);
  mlir::Value rsqrt(mlir::Value x);
  /// `x` as a constant to autodiff (`shardc.stop_gradient`).
  mlir::Value stopGradient(mlir::Value x);
  /// The elementwise op `OpT` on `operands`, of the first one's type.
  template <typename OpT> mlir::Value build(mlir::ValueRange operands) {
    return OpT::create(b, loc, mlir::TypeRange{operands.front().getType()},
                       operands)
        ->getResult(0);
  }
  /// `x` broadcast to `like`'s shape, its dims landing on `dims`.
  mlir::Value broadcast(mlir::Value x, mlir::Value like,
                        llvm::ArrayRef<int64_t> dims) {
    return buildBroadcastInDim(b, loc, like.getType(), x, dims);
  }
  mlir::Value reduceSum(mlir::Value x, llvm::ArrayRef<int64_t> dims) {
    return buildReduceSum(b, loc, x, dims);
  }
  mlir::Value reshape(mlir::Value x, mlir::Type type) {
    return buildReshape(b, loc, type, x);
  }
  /// `x` transposed by `perm`, or `x` when `perm` is the identity.
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm) {
    for (auto [i, d] : llvm::enumerate(perm))
      if (static_cast<int64_t>(i) != d)
        return buildTranspose(b, loc, x, perm);
    return x;
  }
  mlir::Value dotGeneral(mlir::Value lhs, mlir::Value rhs,
                         llvm::ArrayRef<int64_t> lb, llvm::ArrayRef<int64_t> rb,
                         llvm::ArrayRef<int64_t> lc,
                         llvm::ArrayRef<int64_t> rc) {
    return buildDotGeneral(b, loc, lhs, rhs, lb, rb, lc, rc);
  }

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

} // namespace shardc

#endif // SHARDC_DIALECT_GRADIENTBUILDER_H
