//===- GradientBuilder.h - the ops gradient rules are made of ---*- C++ -*-===//
//
// Gradient rules (DifferentiableOpInterface) build their cotangents out of
// ordinary shardc ops, all at one location. The elementwise ops' rules are
// expressions over this builder written in their ODS definitions
// (`gb.mul(g, gb.step(x))` is relu's), so it must not name op classes.
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
  mlir::Value add(mlir::Value x, mlir::Value y) { return op("add", {x, y}); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return op("sub", {x, y}); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return op("mul", {x, y}); }
  mlir::Value div(mlir::Value x, mlir::Value y) { return op("div", {x, y}); }
  mlir::Value neg(mlir::Value x) { return op("neg", {x}); }
  mlir::Value step(mlir::Value x) { return op("step", {x}); }
  mlir::Value tanh(mlir::Value x) { return op("tanh", {x}); }
  /// Any elementwise op, by mnemonic.
  mlir::Value op(llvm::StringRef mnemonic, mlir::ValueRange operands) {
    return buildElementwise(b, loc, mnemonic, operands);
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
