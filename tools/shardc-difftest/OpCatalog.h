//===- OpCatalog.h - which registered ops the generator draws ---*- C++ -*-===//
//
// `shardc-difftest --list-ops`: every op the dialect registers, how many
// generated cases held it, and, for those it never draws, the reason it
// declares. test/docs/check_op_catalog.py fails when a registered op is
// neither drawn nor excluded with a reason, so a new op is either drawn
// (an elementwise op is, from the registry) or says why not.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_TOOLS_DIFFTEST_OPCATALOG_H
#define SHARDC_TOOLS_DIFFTEST_OPCATALOG_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>

namespace shardc {

class OpCatalog {
public:
  /// Every op the shardc dialect registers in `ctx`, drawn 0 times.
  explicit OpCatalog(mlir::MLIRContext &ctx);
  /// Counts the registered ops `module` holds.
  void count(mlir::ModuleOp module);
  /// Prints the ops drawn (with counts), those excluded (with their
  /// reasons), and any op neither drawn nor excluded, or excluded but
  /// drawn. False if there is one of the latter.
  bool print(llvm::raw_ostream &os) const;

private:
  std::map<std::string, int64_t> drawn;
};

} // namespace shardc

#endif // SHARDC_TOOLS_DIFFTEST_OPCATALOG_H
