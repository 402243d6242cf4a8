//===- AutoShardStarts.h - the standard layouts, propagated -----*- C++ -*-===//
//
// The auto-sharder's starting plans (docs/auto-sharding.md, "Against the
// standard layouts"): each standard hand-written layout of the function
// (StandardLayouts.h), completed by propagation as `explain --auto-shard`
// completes it, as the sharding each node of the problem gets.
// AutoShard.cpp turns them into strategies of its problem.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_TRANSFORMS_AUTOSHARDSTARTS_H
#define SHARDC_LIB_TRANSFORMS_AUTOSHARDSTARTS_H

#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <vector>

namespace shardc::detail {

/// What one standard layout gives every argument, op result (the body's
/// ops, in order) and function result of a function; null where
/// propagation left a value without one.
struct LaidOutShardings {
  llvm::StringRef layout;
  std::vector<ShardingAttr> arguments, opResults, functionResults;
};

/// For each standard layout that applies to `func`: its shardings after
/// propagation, the user's annotations kept (they are the problem's hard
/// constraints). A layout propagation fails on is left out.
std::vector<LaidOutShardings> propagateStandardLayouts(mlir::func::FuncOp func,
                                                       MeshOp mesh);

} // namespace shardc::detail

#endif // SHARDC_LIB_TRANSFORMS_AUTOSHARDSTARTS_H
