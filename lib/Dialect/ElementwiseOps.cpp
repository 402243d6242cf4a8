//===- ElementwiseOps.cpp - building elementwise ops by mnemonic ----------===//
//
// An elementwise op is its ODS line: formula, kernel, gradient and cost are
// all in ElementwiseOps.td (Shardc_UnaryElementwiseOp, Shardc_BinaryElementwiseOp)
// and its sharding rule is the identity (getElementwiseShardingRule). What
// remains here is building one from its mnemonic, which gradient rules and
// passes use so that no C++ file names an elementwise op class.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/TensorOpBuilders.h"

using namespace mlir;
using namespace shardc;

Value shardc::buildElementwise(OpBuilder &b, Location loc, StringRef mnemonic,
                               ValueRange operands) {
  MLIRContext *ctx = b.getContext();
  llvm::SmallString<32> name(ShardcDialect::getDialectNamespace());
  name += ".";
  name += mnemonic;
  OperationState state(loc, OperationName(name, ctx));
  state.addOperands(operands);
  state.addTypes(operands.front().getType());
  return b.create(state)->getResult(0);
}
