//===- ShardcOps.h - shardc operations --------------------------*- C++ -*-===//

#ifndef SHARDC_DIALECT_SHARDCOPS_H
#define SHARDC_DIALECT_SHARDCOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "shardc/Dialect/CollectiveOpInterface.h"
#include "shardc/Dialect/CostOpInterface.h"
#include "shardc/Dialect/DecomposableOpInterface.h"
#include "shardc/Dialect/DifferentiableOpInterface.h"
#include "shardc/Dialect/GradientBuilder.h"
#include "shardc/Dialect/KernelOpInterface.h"
#include "shardc/Dialect/OpFields.h"
#include "shardc/Dialect/ShardcAttrs.h"
#include "shardc/Dialect/ShardingRule.h"
#include "shardc/Dialect/TensorOpTraits.h"
#include "shardc/Dialect/ValueDomainOpInterface.h"
#include "shardc/Dialect/ValueNames.h"

#include <cmath>
#include <limits>

namespace shardc {
/// True if `type` is a ranked tensor whose byte size fits in int64.
bool hasAddressableSize(mlir::Type type);
/// The `direction` of shardc.compare.
enum class CompareDirection { EQ, NE, LT, LE, GT, GE };
/// "EQ", "NE", "LT", "LE", "GT", "GE" -> the direction; nullopt otherwise.
std::optional<CompareDirection> symbolizeCompareDirection(llvm::StringRef name);
/// The `fold` of every elementwise op (ElementwiseOps.cpp): the op's own
/// kernel on constant f32, i32 or i64 operands (`operands` as MLIR's
/// folding gives them); null where an operand is not a dense constant or
/// the kernel does not compute the element type.
mlir::OpFoldResult foldElementwise(mlir::Operation *op,
                                   llvm::ArrayRef<mlir::Attribute> operands);
} // namespace shardc

#define GET_OP_CLASSES
#include "shardc/Dialect/ShardcOps.h.inc"

#endif // SHARDC_DIALECT_SHARDCOPS_H
