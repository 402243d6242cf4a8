//===- StandardLayouts.h - the layouts an expert writes by hand -*- C++ -*-===//
//
// The standard hand-written layouts of a model (docs/auto-sharding.md,
// "explain --auto-shard"): everything replicated, data parallel, FSDP,
// Megatron's tensor parallelism and 2-D (data parallel and Megatron). Each
// is a set of argument annotations that propagation completes. `explain
// --auto-shard` simulates them against the plan; the auto-sharder starts
// its search from them, so that its plan is never slower by its own cost
// than any of them (AutoShard.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TRANSFORMS_STANDARDLAYOUTS_H
#define SHARDC_TRANSFORMS_STANDARDLAYOUTS_H

#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace shardc {

enum class StandardLayout { Replicated, DataParallel, Fsdp, Megatron, TwoD };

struct NamedStandardLayout {
  llvm::StringRef name; // "replicated", "data parallel", "fsdp", ...
  StandardLayout layout;
};

/// Every standard layout, in the order `explain --auto-shard` lists them.
llvm::ArrayRef<NamedStandardLayout> getStandardLayouts();

/// Drops every user sharding of `func` but its sharding_constraints (the
/// program's own reshards).
void stripShardingAnnotations(mlir::func::FuncOp func);

/// Strips `func`'s annotations and annotates its arguments as `layout`:
/// data parallel splits every input that is not a weight by rows over the
/// data axis ("data", else the mesh's first); FSDP the weights too;
/// Megatron splits the matmul weights by columns and rows alternately over
/// the model axis ("model", else the mesh's last axis that is not the data
/// axis; the only axis of a 1-D mesh); 2-D is data parallel and Megatron
/// on two axes. Returns false if the layout does not apply (Megatron: no
/// such weight; 2-D: a 1-D mesh). Propagation completes it.
bool applyStandardLayout(mlir::func::FuncOp func, MeshOp mesh,
                         StandardLayout layout);

} // namespace shardc

#endif // SHARDC_TRANSFORMS_STANDARDLAYOUTS_H
