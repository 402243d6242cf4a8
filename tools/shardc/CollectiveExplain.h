//===- CollectiveExplain.h - explain's reshards and readers -----*- C++ -*-===//
//
// `shardc explain`'s report of the partitioned program's collectives: each
// with its bytes, then, per reshard, the consumer that needed it and what
// its alternatives would have cost (docs/cli.md, "shardc explain").
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_SHARDC_COLLECTIVEEXPLAIN_H
#define SHARDC_TOOLS_SHARDC_COLLECTIVEEXPLAIN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace shardc {

/// Prints the collectives of `spmd` (partitioned with explain=true, then
/// cleaned up) with their bytes and totals, then why each reshard happened.
void printCollectives(mlir::func::FuncOp spmd);

} // namespace shardc

#endif // SHARDC_TOOLS_SHARDC_COLLECTIVEEXPLAIN_H
