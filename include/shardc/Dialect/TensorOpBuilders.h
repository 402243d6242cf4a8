//===- TensorOpBuilders.h - tensor ops built without classes ----*- C++ -*-===//
//
// Passes that only *build* tensor ops (autodiff's zeros and sums, the
// optimizer's update, the partitioner, cleanup) use these instead of naming
// op classes, so an op's class appears only in its ODS definition, its
// family file and its kernel file. Each function is defined in the file of
// its op family (lib/Dialect/*Ops.cpp); the elementwise ones (and
// GradientBuilder's) in ElementwiseOps.cpp, by class. What passes ask of
// ops they did not build is in TensorOpQueries.h.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_TENSOROPBUILDERS_H
#define SHARDC_DIALECT_TENSOROPBUILDERS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "llvm/ADT/ArrayRef.h"

namespace shardc {

class ShardingAttr;

/// The elementwise ops passes build, each by its class (ElementwiseOps.cpp).
mlir::Value buildAdd(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                     mlir::Value y);
mlir::Value buildSub(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                     mlir::Value y);
mlir::Value buildMul(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                     mlir::Value y);
mlir::Value buildDiv(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                     mlir::Value y);
mlir::Value buildSqrt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

/// `shardc.constant` of `value`.
mlir::Value buildConstant(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::ElementsAttr value);
/// `shardc.constant` of tensor type `type` with every element `value`.
mlir::Value buildSplatConstant(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Type type, double value);
/// The splat value of `v`'s defining `shardc.constant`, if it is one.
mlir::Attribute getSplatConstantValue(mlir::Value v);

/// `shardc.reshape` of `input` to `type`.
mlir::Value buildReshape(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Type type, mlir::Value input);
/// `shardc.broadcast_in_dim` of `input` to `type`, its dims on `dims`.
mlir::Value buildBroadcastInDim(mlir::OpBuilder &b, mlir::Location loc,
                                mlir::Type type, mlir::Value input,
                                llvm::ArrayRef<int64_t> dims);
/// `shardc.transpose` of `input` by `perm`.
mlir::Value buildTranspose(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value input, llvm::ArrayRef<int64_t> perm);
/// `shardc.reduce_sum` of `input` over `dims`.
mlir::Value buildReduceSum(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value input, llvm::ArrayRef<int64_t> dims);
/// The reduction `name` (an op with the `Reduction` trait) of `input`
/// over `dims`.
mlir::Value buildReduction(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::OperationName name, mlir::Value input,
                           llvm::ArrayRef<int64_t> dims);
/// `shardc.dot_general` (see its ODS description for the dim lists).
mlir::Value buildDotGeneral(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value lhs, mlir::Value rhs,
                            llvm::ArrayRef<int64_t> lhsBatch,
                            llvm::ArrayRef<int64_t> rhsBatch,
                            llvm::ArrayRef<int64_t> lhsContract,
                            llvm::ArrayRef<int64_t> rhsContract);

/// `shardc.iota` of `type`, counting along `dimension`.
mlir::Value buildIota(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::RankedTensorType type, int64_t dimension);
/// `shardc.convert` of `input` to element type `element` (same shape).
mlir::Value buildConvert(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value input, mlir::Type element);
/// `shardc.compare` of `lhs` and `rhs` in `direction` ("EQ", "LT", ...): i1.
mlir::Value buildCompare(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value lhs, mlir::Value rhs,
                         llvm::StringRef direction);
/// `shardc.slice` of `input` from `start` to `limit` (exclusive), every
/// stride 1.
mlir::Value buildSlice(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value input, llvm::ArrayRef<int64_t> start,
                       llvm::ArrayRef<int64_t> limit);
/// `shardc.select`: `onTrue` where `pred` holds, else `onFalse`.
mlir::Value buildSelect(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value pred, mlir::Value onTrue,
                        mlir::Value onFalse);
/// `shardc.sharding_constraint` pinning `input` to `sharding`.
mlir::Value buildShardingConstraint(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::Value input, ShardingAttr sharding);
/// The sharding `op` pins when it is a `shardc.sharding_constraint`, else
/// null.
ShardingAttr getConstrainedSharding(mlir::Operation *op);

} // namespace shardc

#endif // SHARDC_DIALECT_TENSOROPBUILDERS_H
